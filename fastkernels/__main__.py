from fastkernels.cli import main

main()
