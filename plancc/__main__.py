from plancc.launch import main

main()
