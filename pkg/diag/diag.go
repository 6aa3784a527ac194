// Package diag carries problems found in input: an invalid object, field or
// reference. Every problem names the object and, where there is one, the
// field, so that status messages and CLI output can say exactly what to fix.
package diag

import (
	"fmt"

	"github.com/attache-dev/attache/pkg/topology"
)

// Problem is one thing wrong with one input object.
type Problem struct {
	// Object is the object the problem is about (may be zero for input that
	// could not be parsed into an object).
	Object topology.Ref `json:"object,omitempty"`
	// Source says where the object came from (a file and document index, or
	// a cluster resource), when known.
	Source string `json:"source,omitempty"`
	// Field is the JSON path of the offending field, e.g. spec.targetRefs[2].kind.
	Field string `json:"field,omitempty"`
	// Message says what is wrong, in a sentence.
	Message string `json:"message"`
}

// Error renders the problem as one line: source: object: field: message.
func (p Problem) Error() string {
	s := ""
	if p.Source != "" {
		s = p.Source + ": "
	}
	if p.Object.Kind != "" || p.Object.Name != "" {
		s += p.Object.String() + ": "
	}
	if p.Field != "" {
		s += p.Field + ": "
	}
	return s + p.Message
}

// Newf returns a problem about obj's field with a formatted message.
func Newf(obj topology.Ref, field, format string, args ...any) Problem {
	return Problem{Object: obj, Field: field, Message: fmt.Sprintf(format, args...)}
}
