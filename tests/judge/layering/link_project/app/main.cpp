int fixture_lib_value();
int main() { return fixture_lib_value() == 1 ? 0 : 1; }
