package nettrace_test

// Runtime events are named by package clrevents' table, which registers
// the names in its init: importing it here names them for every test of
// this package (one test binary).
import _ "github.com/clrspy/clrspy/clrevents"
