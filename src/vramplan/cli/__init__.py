"""The command-line interface: parse, build typed inputs, call the core, render. One module per
command; `main` wires them together."""
