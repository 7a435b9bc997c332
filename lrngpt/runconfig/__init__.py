"""RunConfig = data + model + train, the one place a setting is validated (schema); a config dict's
sections and key names (keys); the --set and --axis parser (overrides); a GPT's width given as n_embd or
aspect_ratio (width); what each key and preset is (help); YAML and `config show --json` files (files);
the presets (presets/*.json)."""
