"""A suite: its schema and YAML (config.py), lab shapes as data (shape_plan.py), and the plan of tests it
expands to (plan.py)."""
