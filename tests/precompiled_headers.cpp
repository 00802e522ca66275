// The owner of the test programs' precompiled headers (tests/CMakeLists.txt): a translation unit
// that includes nothing but them, in a program that runs no test.
