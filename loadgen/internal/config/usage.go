// Package config turns command-line flags and environment variables into a
// validated Config. Everything a user can get wrong is reported as a
// *UsageError before any load is sent.
package config

import "fmt"

// UsageError is a mistake the user can fix. It prints as exactly one line:
// "<what is wrong> (<flag>): <how to fix>".
type UsageError struct {
	What string // what is wrong
	Flag string // the flag or environment variable concerned
	Hint string // how to fix it
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s (%s): %s", e.What, e.Flag, e.Hint)
}

// Usagef builds a UsageError.
func Usagef(flag, hint, format string, args ...any) *UsageError {
	return &UsageError{What: fmt.Sprintf(format, args...), Flag: flag, Hint: hint}
}
