package report

import "sort"

// sortEffective orders effective policies by kind, target, then path.
func sortEffective(e []EffectivePolicy) {
	sort.SliceStable(e, func(i, j int) bool {
		a, b := e[i], e[j]
		if a.PolicyKind != b.PolicyKind {
			return a.PolicyKind < b.PolicyKind
		}
		if c := a.Target.Compare(b.Target); c != 0 {
			return c < 0
		}
		for k := 0; k < len(a.Path) && k < len(b.Path); k++ {
			if c := a.Path[k].Compare(b.Path[k]); c != 0 {
				return c < 0
			}
		}
		return len(a.Path) < len(b.Path)
	})
}
