package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() {
	commands = append(commands, func() *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print clrspy's version",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				fmt.Fprintln(cmd.OutOrStdout(), versionLine())
				return nil
			},
		}
	})
}

// versionString is the module version from the build info: the tag `go
// install .../cmd/clrspy@v1.2.3` built, the pseudo-version Go stamps from
// the checkout's VCS state, or "dev" for a build without either.
func versionString(bi *debug.BuildInfo) string {
	v := "dev"
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return v
}

// versionLine is "clrspy VERSION (REVISION[, modified]) GOOS/GOARCH GOVERSION".
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	s := "clrspy " + versionString(bi)
	if bi != nil {
		rev, dirty := "", false
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.modified":
				dirty = kv.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			if dirty {
				rev += ", modified"
			}
			s += " (" + rev + ")"
		}
	}
	return fmt.Sprintf("%s %s/%s %s", s, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
