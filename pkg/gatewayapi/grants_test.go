package gatewayapi_test

import (
	"testing"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

var gatewayapiHandles = gatewayapi.Handles

func TestGrantsAllows(t *testing.T) {
	objs := parse(t, docs(
		obj("ReferenceGrant", "db", "g1", `{
			from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}, {group: example.com, kind: Policy, namespace: pol}],
			to: [{group: "", kind: Service, name: pg}, {group: "", kind: Secret}]}`),
		"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g2, namespace: db}\n"+
			"spec: {from: [{group: gateway.networking.k8s.io, kind: TCPRoute, namespace: app}], to: [{group: '', kind: Service, name: ''}]}",
	))
	_, grants, probs, _ := build(t, objs)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	svc := func(ns, name string) topology.Ref { return topology.Ref{Kind: "Service", Namespace: ns, Name: name} }
	cases := []struct {
		name   string
		from   topology.GroupKind
		fromNS string
		to     topology.Ref
		want   bool
	}{
		{"named to entry", topology.KindHTTPRoute, "app", svc("db", "pg"), true},
		{"other name", topology.KindHTTPRoute, "app", svc("db", "other"), false},
		{"unnamed to entry allows every name", topology.KindHTTPRoute, "app", topology.Ref{Kind: "Secret", Namespace: "db", Name: "any"}, true},
		{"empty name allows every name", topology.KindTCPRoute, "app", svc("db", "any"), true},
		{"other from namespace", topology.KindHTTPRoute, "other", svc("db", "pg"), false},
		{"other from kind", topology.KindGRPCRoute, "app", svc("db", "pg"), false},
		{"other to group", topology.KindHTTPRoute, "app", topology.Ref{Group: "example.com", Kind: "Service", Namespace: "db", Name: "pg"}, false},
		{"section name ignored", topology.GroupKind{Group: "example.com", Kind: "Policy"}, "pol", svc("db", "pg").WithSection("http"), true},
		{"grant lives in the referent's namespace only", topology.KindHTTPRoute, "app", svc("elsewhere", "pg"), false},
		{"same namespace always", topology.KindGRPCRoute, "db", svc("db", "x"), true},
	}
	for _, tc := range cases {
		if got := grants.Allows(tc.from, tc.fromNS, tc.to); got != tc.want {
			t.Errorf("%s: Allows(%s, %s, %s) = %t, want %t", tc.name, tc.from, tc.fromNS, tc.to, got, tc.want)
		}
	}

	var none *gatewayapi.Grants
	if !none.Allows(topology.KindHTTPRoute, "a", svc("a", "x")) || none.Allows(topology.KindHTTPRoute, "a", svc("b", "x")) {
		t.Error("nil Grants must allow the same namespace only")
	}
	if (&gatewayapi.Grants{}).Allows(topology.KindHTTPRoute, "a", svc("b", "x")) {
		t.Error("empty Grants must allow the same namespace only")
	}
}
