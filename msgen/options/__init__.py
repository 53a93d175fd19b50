"""Every option once (`option_table`), and what reads options: flags, annotations, KRM
function configs, Argo CD's environment."""
