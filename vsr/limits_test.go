package vsr

import "testing"

// TestLimits checks the relationships between the named limits; each check
// says why it must hold.
func TestLimits(t *testing.T) {
	if headerBytes%16 != 0 {
		t.Fatal("headerBytes must be a multiple of 16 so bodies stay aligned")
	}
	if messageBytesMax <= headerBytes {
		t.Fatal("a message must have room for a body")
	}
	if replicaCountMax > 32 {
		t.Fatal("acknowledgements are a uint32 bitset per pipeline entry")
	}
	if replicaCountMax > 255 {
		t.Fatal("the replica index is one header byte")
	}
	if journalSlotCountDefault < 2*pipelineLenMax {
		t.Fatal("the journal must hold a whole pipeline plus committed ops to repair peers from")
	}
	if journalSlotCountDefault > journalSlotCountMax {
		t.Fatal("the default journal exceeds its maximum")
	}
	if repairPreparesMax > journalSlotCountDefault {
		t.Fatal("a repair burst cannot ask for more than a journal holds")
	}
	if clientsMax*clientSessionBytes+4 > stateBytesMax {
		t.Fatal("a state transfer must be able to carry the whole client table")
	}
	if stateChunkBytesDefault > stateChunkBytesMax || headerBytes+stateChunkBytesMax > messageBytesMax {
		t.Fatal("a State chunk must fit in one message")
	}
	if stateChunksPerRequest > messagesPerStepMax/2 {
		t.Fatal("a burst of State chunks must leave room in a batch for other messages")
	}
	if messageBytesMax < headerBytes+16<<20+4096 {
		t.Fatal("a Prepare must carry the largest batch a client may send (16 MiB and more) with its header")
	}
	if stateChunksPerRequest*(headerBytes+stateChunkBytesMax) > 64<<20 {
		t.Fatal("a burst of State chunks is held in one buffer, which must stay small")
	}
	if messagesPerStepMax < repairPreparesMax+replicaCountMax {
		t.Fatal("one step must be able to answer a repair burst and broadcast")
	}
}
