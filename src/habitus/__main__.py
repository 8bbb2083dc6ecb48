from habitus.launcher import main

main()
