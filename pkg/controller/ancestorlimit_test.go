package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/engine"
)

// The AncestorLimitReached condition is the controller's own: written once
// while the engine says it, replaced (not kept beside a new one) when its
// message changes, and removed when the engine no longer says it.
func TestMergePolicyStatusAncestorLimit(t *testing.T) {
	const ctl = "example.com/ctl"
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	limit := func(msg string) engine.Condition {
		return engine.Condition{Type: engine.ConditionAncestorLimit, Status: "True", Reason: engine.ReasonAncestorLimitReached, Message: msg}
	}
	accepted := engine.Condition{Type: engine.CondAccepted, Status: "True", Reason: engine.ReasonAccepted, Message: "Policy is accepted"}
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{}}}
	count := func(status map[string]any) (n int, msg string) {
		for _, c := range maps(status["conditions"]) {
			if c["type"] == engine.ConditionAncestorLimit {
				n++
				msg, _ = c["message"].(string)
			}
		}
		return n, msg
	}
	for i, tc := range []struct {
		conds []engine.Condition
		n     int
		msg   string
	}{
		{[]engine.Condition{accepted, limit("Not applied at Gateway default/g16")}, 1, "Not applied at Gateway default/g16"},
		{[]engine.Condition{accepted, limit("Not applied at Gateway default/g17")}, 1, "Not applied at Gateway default/g17"},
		{[]engine.Condition{accepted}, 0, ""},
	} {
		status, changed := mergePolicyStatus(obj, &policyDesired{conditions: tc.conds}, ctl, now)
		if !changed {
			t.Errorf("step %d: no change", i)
		}
		if n, msg := count(status); n != tc.n || msg != tc.msg {
			t.Errorf("step %d: %d AncestorLimitReached conditions, message %q; want %d, %q", i, n, msg, tc.n, tc.msg)
		}
		obj.Object["status"] = status
	}
}
