// Package source turns the places clrspy reads events from into one event
// stream: a .nettrace file, standard input, a running process (attach by
// pid or name), a program clrspy starts itself with the runtime suspended
// until the session is open (launch), or runtimes that connect to a
// diagnostic port clrspy listens on (listen). Every analysis command, `top`,
// `report` and `serve` open their input here and feed the same analyses.
//
// It owns session lifetime: starting and stopping EventPipe sessions,
// --duration, passing signals on to a launched program only once its
// session has stopped (so the rundown is never cut), and the program's exit
// status. It also watches /proc for what events do not carry (thread
// names, file mappings).
//
// It reports plain errors: no progress bars, no exit codes, no printing
// (notices go to Spec.Notice); cmd/clrspy decides how they look.
package source
