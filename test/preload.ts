// Loaded before every test file (bunfig.toml): quiet logs unless asked for.
process.env.LOG_LEVEL ??= 'silent'
