from .hosts.command_line.entry import main

main()
