"""The command line: options, commands, how a report is printed, typer's app, the console
script and the process plumbing."""
