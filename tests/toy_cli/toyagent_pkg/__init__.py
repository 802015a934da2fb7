"""`python -m toyagent_pkg` runs tests/toy_cli/toyagent: the interpreter-wrapped launch style."""
