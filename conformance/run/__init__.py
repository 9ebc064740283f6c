"""Running one case on one framework: the engine, the sandbox process it runs in."""
