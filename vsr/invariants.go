package vsr

import "github.com/whippetio/whippet/internal/invariant"

// checkInvariants runs after every Step and Tick (doc.go lists them).
func (r *Replica) checkInvariants() {
	invariant.Assert(r.commitMin <= r.op, "1: the commit point is inside the log")
	invariant.Assert(r.commitMin <= r.commitMax, "2: nothing is applied before it is known committed")
	invariant.Assert(r.chainLow > r.commitMin, "3: the verified chain starts above the commit point")
	invariant.Assert(r.chainLow <= r.op+1, "3: the verified chain ends at the head")
	invariant.Assert(r.logView <= r.view, "4: the log view never passes the view")
	if r.status == StatusNormal && r.IsPrimary() {
		invariant.Assert(r.complete(), "5: a normal primary has a complete log")
		invariant.Assert(r.op-r.commitMin <= uint64(r.cfg.PipelineLen), "5: a primary's suffix fits the pipeline")
	}
	if r.status == StatusNormal && r.complete() {
		invariant.Assert(r.logView == r.view, "6: a complete normal log belongs to the view")
	}
	if invariant.Enabled {
		r.checkChain()
		r.checkJournalBelowHead()
	}
}

// checkJournalBelowHead: nothing above the head survives in the journal, so
// no entry of an abandoned log can link into a prefix named in a vote.
func (r *Replica) checkJournalBelowHead() {
	for i := range r.journal.slots {
		s := &r.journal.slots[i]
		invariant.Assert(!s.present || s.op <= r.op, "9: the journal holds nothing above the head")
	}
}

// checkChain re-verifies the hash links of [chainLow, op].
func (r *Replica) checkChain() {
	for op := r.chainLow; op <= r.op; op++ {
		s := r.journal.entry(op)
		invariant.Assert(s != nil, "3: the verified chain is present")
		if op == r.op {
			invariant.Assert(s.checksum == r.opChecksum, "3: the head has the trusted checksum")
		} else {
			invariant.Assert(r.journal.entry(op+1).parent == s.checksum, "3: the verified chain links")
		}
	}
}
