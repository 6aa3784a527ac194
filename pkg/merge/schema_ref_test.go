package merge

// refMergeS is the reference for a schema-aware patch step on plain values
// (keeping the patch's nulls, as refMerge does): the fold under a schema
// must give its value. It is checked against structured-merge-diff in
// TestSchemaOracleSMD, for patches without nulls.
func refMergeS(target, patch any, s *Schema) any {
	if s == nil {
		return refMerge(target, patch)
	}
	if pl, ok := patch.([]any); ok {
		tl, ok := target.([]any)
		if s.list != listAtomic && ok && refKeyable(tl, s) && refKeyable(pl, s) {
			return refMergeList(tl, pl, s)
		}
		return patch
	}
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok || s.atomicMap {
		return patch
	}
	out := make(map[string]any, len(tm)+len(pm))
	for k, v := range tm {
		out[k] = v
	}
	for k, v := range pm {
		tv, had := tm[k]
		switch {
		case !had || (s.atomicEntries && !s.Child(k).namedRules()):
			// A named rule replaced whole, unless it is a map of named
			// rules in turn (merged entry by entry below).
			out[k] = v
		default:
			out[k] = refMergeS(tv, v, s.Child(k))
		}
	}
	// A oneof member the patch sets (not null) takes the oneof: the
	// target's other members go, unless the patch has them too; a null
	// member of the target stays (a deletion marker).
	for _, g := range s.oneofs {
		set := false
		for _, m := range g {
			if v, ok := pm[m]; ok && v != nil {
				set = true
			}
		}
		for _, m := range g {
			if _, inP := pm[m]; set && !inP && tm[m] != nil {
				delete(out, m)
			}
		}
	}
	return out
}

func refID(it any, s *Schema) (string, bool) { return itemID(it, s) }

func refKeyable(l []any, s *Schema) bool {
	seen := map[string]bool{}
	for _, it := range l {
		id, ok := refID(it, s)
		if !ok || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

// refMergeList merges keyed lists in structured-merge-diff's order
// (quadratic, and phrased as a reading of the target interrupted by the
// patch's items rather than as mergeList's two-pointer walk): the patch's
// items come out in the patch's order; between them the target is read on.
func refMergeList(tl, pl []any, s *Schema) any {
	switch {
	case len(pl) == 0:
		return tl
	case len(tl) == 0:
		return pl
	}
	tid := make([]string, len(tl))
	pid := make([]string, len(pl))
	for i, it := range tl {
		tid[i], _ = refID(it, s)
	}
	for j, it := range pl {
		pid[j], _ = refID(it, s)
	}
	indexOf := func(ids []string, id string) int {
		for i, x := range ids {
			if x == id {
				return i
			}
		}
		return -1
	}
	var out []any
	emitted := map[string]bool{}
	emitPatch := func(j int) {
		v := pl[j]
		if i := indexOf(tid, pid[j]); i >= 0 && s.list == listMap {
			v = refMergeS(tl[i], pl[j], s.items)
		}
		out = append(out, v)
		emitted[pid[j]] = true
	}
	// The target's items are read once, front to back: a target-only item
	// comes out when reached; a shared item is passed over unless it is the
	// next shared item the patch will bring, which holds the reading until
	// the patch has brought it.
	i := 0
	flush := func() {
		for ; i < len(tl); i++ {
			if emitted[tid[i]] {
				continue
			}
			if indexOf(pid, tid[i]) >= 0 {
				if tid[i] == nextSharedAfter(pid, tid, emitted) {
					return
				}
				continue
			}
			out = append(out, tl[i])
			emitted[tid[i]] = true
		}
	}
	for j := range pl {
		flush()
		emitPatch(j)
	}
	flush()
	return out
}

// nextSharedAfter is the first patch item not yet out that the target has.
func nextSharedAfter(pid, tid []string, emitted map[string]bool) string {
	for _, id := range pid {
		if emitted[id] {
			continue
		}
		for _, t := range tid {
			if t == id {
				return id
			}
		}
	}
	return ""
}
