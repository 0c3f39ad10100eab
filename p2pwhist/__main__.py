from p2pwhist.cli import main

raise SystemExit(main())
