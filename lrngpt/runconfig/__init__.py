"""RunConfig = data + model + train, the one place a setting is validated (schema); what each key and
preset is (help); YAML and `config show --json` files (files); the presets (presets/*.json)."""
