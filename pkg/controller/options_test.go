package controller

import (
	"errors"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

func TestOptionsComplete(t *testing.T) {
	var o Options
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	if o.ControllerName != engine.DefaultControllerName || o.ConditionDomain != engine.DefaultConditionDomain || o.Debounce == 0 || o.ResyncPeriod == 0 {
		t.Errorf("defaults: %+v", o)
	}
	for _, bad := range []Options{
		{ControllerName: "no-slash"},
		{ConditionDomain: "Not_A_Domain"},
		{EffectivePolicies: true, EffectivePolicyNamespace: "Not A Namespace"},
	} {
		if err := bad.complete(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds(" ColorPolicy.policies.example.com, Service ,")
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.GroupKind{{Group: "policies.example.com", Kind: "ColorPolicy"}, {Kind: "Service"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseKinds(".group"); err == nil {
		t.Error(".group: no error")
	}
}

func TestPolicyErrors(t *testing.T) {
	a := topology.Ref{Group: "g", Kind: "P", Namespace: "ns", Name: "a"}
	b := topology.Ref{Group: "g", Kind: "P", Namespace: "ns", Name: "b"}
	var err error = PolicyErrors{b: errors.New("bad b"), a: errors.New("bad a")}
	if got := err.Error(); got != "P ns/a: bad a; P ns/b: bad b" {
		t.Errorf("Error() = %q", got)
	}
	if policyError(err, a) == nil || policyError(err, topology.Ref{Name: "c"}) != nil {
		t.Error("policyError does not pick the policy's own error")
	}
	if policyError(errors.New("all"), a) == nil {
		t.Error("a plain error fails every policy")
	}
	conds := programmed([]engine.Condition{{Type: "Programmed", Status: "True", Reason: "Programmed"}, {Type: "Accepted", Status: "True"}}, errors.New("boom"), false)
	if conds[0].Status != "False" || conds[0].Reason != engine.ReasonReconciling || !strings.Contains(conds[0].Message, "boom") || conds[1].Status != "True" {
		t.Errorf("programmed: %+v", conds)
	}
	over := programmed([]engine.Condition{{Type: "Programmed", Status: "False", Reason: "Overridden"}}, nil, true)
	if over[0].Reason != "Overridden" {
		t.Errorf("an Overridden policy is not Reconciling: %+v", over)
	}
}
