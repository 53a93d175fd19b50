from .hosts.entry import main

main()
