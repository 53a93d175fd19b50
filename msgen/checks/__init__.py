"""What is checked about a job besides its kind's own rules: the input-model checker, the pod
schema, the API server's rules (`apirules`), and bounds on what msgen writes."""
