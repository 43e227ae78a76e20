package spec

import (
	"strings"
	"testing"
)

// Compare orders addresses as their text does, even where a field is a
// prefix of another and the next character sorts before '/'.
func TestAddressCompareIsTextOrder(t *testing.T) {
	as := []Address{
		{Provider: "aws", Kind: "object", Name: "x"}, {Provider: "aws", Kind: "object-store", Name: "x"},
		{Provider: "aws", Kind: "object.store", Name: "a"}, {Provider: "aws2", Kind: "a", Name: "b"},
		{Provider: "aws", Kind: "queues", Name: "q"}, {Provider: "aws", Kind: "queues", Name: "q-1"},
		{Provider: "aws", Kind: "queues", Name: "q/1"}, {Provider: "aws", Kind: "queues", Name: strings.Repeat("n", 300)},
		{Provider: "aws", Kind: "queues", Name: strings.Repeat("n", 299) + "m"},
	}
	for _, a := range as {
		for _, b := range as {
			want := strings.Compare(a.String(), b.String())
			if got := a.Compare(b); got != want {
				t.Errorf("%s vs %s: %d, want %d", a, b, got, want)
			}
		}
	}
}
