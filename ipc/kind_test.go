package ipc

import "testing"

// TestAttachErrorKind: every cause Find, Dial and the reverse port report
// falls in its class.
func TestAttachErrorKind(t *testing.T) {
	for reason, want := range map[string]string{
		"no such process": "gone",
		"the runtime hung up its diagnostic port connection (exited)":                                                        "gone",
		"cannot search /proc/9/root/tmp for its diagnostics socket: permission denied":                                       "permission",
		"permission denied connecting to /tmp/dotnet-diagnostic-9-1-socket (owned by uid 1000)":                              "permission",
		"the diagnostics socket /tmp/x is owned by uid 1000; clrspy runs as uid 1001: run it as that user":                   "permission",
		"no diagnostics socket in /tmp, and the process belongs to uid 1000, so its TMPDIR cannot be read":                   "permission",
		"diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)":                                              "disabled",
		"the diagnostic port is disabled in this process (DOTNET_EnableDiagnostics_IPC=0)":                                   "disabled",
		"dotnet runs .NET but has no diagnostics socket in /tmp (removed, or the diagnostic port disabled by configuration)": "no_socket",
		"sleep has no diagnostics socket in /tmp: not a .NET process, or one whose runtime has not started yet":              "no_socket",
		"nothing listens on /tmp/x (a stale socket of a process that has exited?)":                                           "refused",
		"the runtime did not connect to /run/p.sock within 10s":                                                              "timeout",
		"connecting to /tmp/x: i/o timeout":                                                                                  "other",
	} {
		if got := (&AttachError{1, reason}).Kind(); got != want {
			t.Errorf("%q: %s, want %s", reason, got, want)
		}
	}
}
