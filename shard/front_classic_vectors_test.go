package shard

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// TestClassicTranslatesEveryVector: every classic request the legacy
// golden frames hold (all 47 codes, as the classic Go SDK wrote them)
// either runs on the classic path itself (Ping, the logins, Logout) or
// becomes a 0.9 request whose body the 0.9 decoder accepts, against a view
// holding the entities the frames name.
func TestClassicTranslatesEveryVector(t *testing.T) {
	raw, err := os.ReadFile("../../shared/protocol/legacy/vectors/requests.json")
	if err != nil {
		t.Fatalf("read request vectors: %v", err)
	}
	var vectors []struct {
		Command string `json:"command"`
		Code    uint32 `json:"code"`
		Payload string `json:"payload_hex"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	client := wire.Uint128{Lo: 1, Hi: classicClientHigh}
	view := classicTestView(clientKey(client))
	codes := map[classic.Code]bool{}
	for _, vector := range vectors {
		code := classic.Code(vector.Code)
		if !code.Known() {
			continue // code 999: refused before decoding
		}
		codes[code] = true
		body, err := hex.DecodeString(vector.Payload)
		if err != nil {
			t.Fatal(err)
		}
		request, _, err := classic.DecodeRequest(code, body)
		if err != nil {
			t.Fatalf("%s: %v", vector.Command, err)
		}
		switch code {
		case classic.CodePing, classic.CodeLoginUser, classic.CodeLoginWithPersonalAccessToken, classic.CodeLogoutUser:
			continue
		}
		f, s := &front{roundRobin: map[[2]uint32]uint32{}}, &session{client: client, classic: &classicConn{}}
		wireCode, translated, status := f.classicTranslate(s, view, request)
		if status != classic.StatusOK || translated == nil {
			t.Errorf("%s: status %v, body %v", vector.Command, status, translated)
			continue
		}
		if uint32(wireCode) != uint32(code) {
			t.Errorf("%s: becomes 0.9 code %d", vector.Command, wireCode)
		}
		encoded := make([]byte, translated.EncodedSize())
		translated.Encode(encoded)
		var set wire.RequestSet
		if _, known, err := set.Decode(wireCode, encoded); !known || err != nil {
			t.Errorf("%s: the 0.9 body does not decode: known %v, %v", vector.Command, known, err)
		}
	}
	if len(codes) != classic.CodeCount {
		t.Fatalf("the vectors cover %d codes, want %d", len(codes), classic.CodeCount)
	}
}

// classicTestView holds what the legacy frames name: streams "orders" (0)
// and "orders-v2" (1), topics "events" with 3 partitions and
// "events-v2" with 4, group "workers" (0) with member owning every
// partition.
func classicTestView(member metadata.ClientID) *frontView {
	topic := func(name string, partitions int) *metadata.Topic {
		t := &metadata.Topic{Name: name, Partitions: make([]metadata.Partition, partitions)}
		for i := range t.Partitions {
			t.Partitions[i].ID = uint32(i)
		}
		t.Groups = []*metadata.ConsumerGroup{{ID: 0, Name: "workers"}}
		t.NextGroupID = 1
		return t
	}
	view := &frontView{streams: []*metadata.Stream{
		{ID: 0, Name: "orders", Topics: []*metadata.Topic{topic("events", 3)}},
		{ID: 1, Name: "orders-v2", Topics: []*metadata.Topic{topic("events-v2", 4)}},
	}, groups: map[metadata.GroupKey]*viewGroup{}}
	view.groups[metadata.GroupKey{StreamID: 0, TopicID: 0, GroupID: 0}] = &viewGroup{
		members: []metadata.Member{{ID: 0, Client: member, Partitions: []uint32{0, 1, 2}}}}
	return view
}
