"""YAML in and out: reading with positions, canonical writing, output files."""
