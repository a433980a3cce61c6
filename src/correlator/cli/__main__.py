from correlator.cli import main

main()
