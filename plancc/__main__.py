from plancc.cli.launch import main

main()
