int fixture_lib_value() { return 1; }
