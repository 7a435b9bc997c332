"""RunConfig = data + model + train, validated in one place: its dataclasses (schema) and the rules of a
config dict and its values, whatever wrote it (values); the --set and --axis parser (overrides); a GPT's
width given as n_embd or aspect_ratio (width); what each key and preset is (help); JSON, YAML (yaml12) and
`config show --json` files (files); the presets (presets/*.json)."""
