package gcpfake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// With $alt=json;enum-encoding=int a GAPIC client writes an enum as its
// protobuf number, and the API answers in kind. A discovery document
// lists an enum's names in declaration order but not their numbers, and
// the two differ where a proto skips numbers (secretmanager's
// Secret.SecretType OTHER = 50, sixth value). The numbers are taken from
// the protobuf descriptors linked into the binary instead: a client that
// asks for integer enums is a GAPIC client, so its API's *pb package is
// linked and registered. Only when no descriptor matches does the fake
// fall back to the value's index in the list, and then it keeps names in
// its answers, which every client reads.

// enumNumbers maps the names of the enum in field f to protobuf numbers;
// fromProto says whether they come from a descriptor (else: indices).
func enumNumbers(d *Doc, f field, names []string) (nums map[string]int32, fromProto bool) {
	key := d.Name + "/" + d.Version + "/" + f.schema + "." + f.prop
	if v, ok := enumCache.Load(key); ok {
		e := v.(enumEntry)
		return e.nums, e.fromProto
	}
	nums = protoEnum(d, f, names)
	fromProto = nums != nil
	if nums == nil {
		nums = map[string]int32{}
		for i, n := range names {
			nums[n] = int32(i)
		}
	}
	enumCache.Store(key, enumEntry{nums, fromProto})
	return nums, fromProto
}

type enumEntry struct {
	nums      map[string]int32
	fromProto bool
}

var enumCache sync.Map

// protoEnum finds the registered message named like the discovery schema
// whose field (by JSON name) is an enum holding every listed name, and
// returns that enum's numbers. Candidates in a package naming the API
// (google.cloud.secretmanager.v1 for secretmanager v1) win over others;
// several disagreeing candidates give nil rather than a guess.
func protoEnum(d *Doc, f field, names []string) map[string]int32 {
	if f.schema == "" {
		return nil
	}
	best, bestScore := []map[string]int32(nil), -1
	for _, md := range messagesNamed(f.schema) {
		nums := fieldEnum(md, f.prop, names)
		if nums == nil {
			continue
		}
		score := packageScore(d, string(md.ParentFile().Package()))
		switch {
		case score > bestScore:
			best, bestScore = []map[string]int32{nums}, score
		case score == bestScore && !containsMapping(best, nums):
			best = append(best, nums)
		}
	}
	if len(best) != 1 {
		return nil
	}
	return best[0]
}

func fieldEnum(md protoreflect.MessageDescriptor, jsonName string, names []string) map[string]int32 {
	fd := md.Fields().ByJSONName(jsonName)
	if fd == nil {
		return nil
	}
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	ed := fd.Enum()
	if ed == nil {
		return nil
	}
	nums := map[string]int32{}
	for _, n := range names {
		v := ed.Values().ByName(protoreflect.Name(n))
		if v == nil {
			return nil
		}
		nums[n] = int32(v.Number())
	}
	return nums
}

// packageScore ranks a proto package for an API: 2 when it names the API
// and ends in its version, 1 for the version alone, else 0.
func packageScore(d *Doc, pkg string) int {
	parts := strings.Split(pkg, ".")
	if parts[len(parts)-1] != d.Version {
		return 0
	}
	for _, p := range parts[:len(parts)-1] {
		if len(p) > 3 && strings.Contains(d.Name, p) && p != "google" && p != "cloud" {
			return 2
		}
	}
	return 1
}

func containsMapping(ms []map[string]int32, m map[string]int32) bool {
	for _, x := range ms {
		if fmt.Sprint(x) == fmt.Sprint(m) {
			return true
		}
	}
	return false
}

// messageIndex holds every registered message by short name, built once:
// registration happens in package init, before any request.
var messageIndex struct {
	once   sync.Once
	byName map[string][]protoreflect.MessageDescriptor
}

func messagesNamed(name string) []protoreflect.MessageDescriptor {
	messageIndex.once.Do(func() {
		messageIndex.byName = map[string][]protoreflect.MessageDescriptor{}
		var add func(protoreflect.MessageDescriptors)
		add = func(ms protoreflect.MessageDescriptors) {
			for i := 0; i < ms.Len(); i++ {
				md := ms.Get(i)
				messageIndex.byName[string(md.Name())] = append(messageIndex.byName[string(md.Name())], md)
				add(md.Messages())
			}
		}
		protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			add(fd.Messages())
			return true
		})
	})
	return messageIndex.byName[name]
}

func numberValues(nums map[string]int32) []int32 {
	out := make([]int32, 0, len(nums))
	for _, n := range nums {
		out = append(out, n)
	}
	return out
}

func describeNumbers(names []string, nums map[string]int32) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Itoa(int(nums[n]))
	}
	return strings.Join(parts, ", ")
}

// encodeEnums rewrites, in place, the enum names of a value of schema ref
// as protobuf numbers, as the API does when asked for enum-encoding=int;
// an enum whose numbers are unknown keeps its names.
func (d *Doc) encodeEnums(ref string, v any) any {
	return d.mapEnums(&Schema{Ref: ref}, v, field{}, true)
}

// decodeEnums rewrites enum numbers in a checked request body as names,
// so that handlers see, and store, one form.
func (d *Doc) decodeEnums(ref string, v any) any {
	return d.mapEnums(&Schema{Ref: ref}, v, field{}, false)
}

func (d *Doc) mapEnums(s *Schema, v any, f field, toNumbers bool) any {
	if s = d.deref(s); s == nil {
		return v
	}
	switch x := v.(type) {
	case []any:
		if s.Items != nil {
			for i := range x {
				x[i] = d.mapEnums(s.Items, x[i], f, toNumbers)
			}
		}
	case map[string]any:
		for k, e := range x {
			if p := s.Properties[k]; p != nil {
				x[k] = d.mapEnums(p, e, field{s.ID, k}, toNumbers)
			} else if s.AdditionalProperties != nil {
				x[k] = d.mapEnums(s.AdditionalProperties, e, f, toNumbers)
			}
		}
	default:
		if len(s.Enum) > 0 {
			return d.mapEnum(s, v, f, toNumbers)
		}
	}
	return v
}

func (d *Doc) mapEnum(s *Schema, v any, f field, toNumbers bool) any {
	nums, fromProto := enumNumbers(d, f, s.Enum)
	if name, ok := v.(string); ok && toNumbers && fromProto {
		if n, known := nums[name]; known {
			return json.Number(strconv.Itoa(int(n)))
		}
	}
	if text, ok := numberText(v); ok && !toNumbers {
		for name, n := range nums {
			if strconv.Itoa(int(n)) == text {
				return name
			}
		}
	}
	return v
}
