"""The bottom layer: the plan, patches, findings, positions, names, quantities, versions and
policies every other package speaks; it imports nothing above it."""
