from plancc.cli import main

main()
