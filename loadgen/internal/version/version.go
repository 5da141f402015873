// Package version names the build.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X .../internal/version.Version=v1.2.3".
var Version = "dev"

// Get returns Version, or "dev+<vcs revision>" when built from a checkout.
func Get() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v := "dev+" + rev
			if dirty {
				v += "-dirty"
			}
			return v
		}
	}
	return Version
}

// Long is the "version" command's line.
func Long() string {
	s := "cephbench-loadgen " + Get() + " (" + runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/minio/minio-go/v7" {
				s += ", minio-go " + d.Version
			}
		}
	}
	return s + ")"
}
