package spec

import "testing"

func vpcDoc(name, cidr string) string {
	return `{"address": "aws/vpc/` + name + `", "spec": {"cidr": "` + cidr + `"}}`
}

func subnetDoc(name, vpc, cidr string) string {
	return `{"address": "aws/subnet/` + name + `", "spec": {"vpc": {"ref": "aws/vpc/` + vpc + `"}, "cidr": "` + cidr + `",
		"availabilityZone": "eu-west-3a"}}`
}

// A subnet's block lies inside its VPC's, or check says so on the subnet,
// naming both blocks and the VPC.
func TestCheckHoldsSubnetCIDRWithinItsVPC(t *testing.T) {
	for _, tc := range []struct {
		name, vpc, subnet string
		want              []row
	}{
		{"inside", "10.0.0.0/16", "10.0.1.0/24", nil},
		{"equal", "10.0.0.0/16", "10.0.0.0/16", nil},
		{"at the top end", "10.0.0.0/16", "10.0.255.240/28", nil},
		{"outside", "10.0.0.0/16", "10.1.0.0/24",
			[]row{{"aws/subnet/a", `field "cidr": 10.1.0.0/24 is not inside 10.0.0.0/16, the cidr of aws/vpc/main`}}},
		// Starts inside but is wider than the VPC.
		{"wider", "10.0.0.0/16", "10.0.0.0/15",
			[]row{{"aws/subnet/a", `field "cidr": 10.0.0.0/15 is not inside 10.0.0.0/16, the cidr of aws/vpc/main`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := validateJSON(t, docJSON(nil, vpcDoc("main", tc.vpc), subnetDoc("a", "main", tc.subnet)))
			checkRows(t, rows, tc.want...)
			for _, r := range rows {
				if r.ID != RowCIDROutside || r.Evidence != "aws/vpc/main" {
					t.Errorf("row %+v: want %s with the VPC as evidence", r, RowCIDROutside)
				}
			}
		})
	}
}

// A block that is no canonical IPv4 CIDR is an invalid-cidr row where it
// is written, and is not compared with another block.
func TestCheckRefusesMalformedCIDR(t *testing.T) {
	for _, tc := range []struct {
		name, vpc, subnet string
		want              []row
		resolution        string
	}{
		{"malformed subnet", "10.0.0.0/16", "10.0.0/24",
			[]row{{"aws/subnet/a", `field "cidr": "10.0.0/24" is not an IPv4 CIDR block`}}, "write an IPv4 block as a.b.c.d/n, such as 10.0.0.0/16"},
		{"malformed VPC", "10.0.0.0/33", "10.0.0.0/24",
			[]row{{"aws/vpc/main", `field "cidr": "10.0.0.0/33" is not an IPv4 CIDR block`}}, "write an IPv4 block as a.b.c.d/n, such as 10.0.0.0/16"},
		{"IPv6", "fd00::/56", "10.0.0.0/24",
			[]row{{"aws/vpc/main", `field "cidr": "fd00::/56" is not an IPv4 CIDR block`}}, ""},
		{"host bits", "10.0.0.0/16", "10.0.1.7/24",
			[]row{{"aws/subnet/a", `field "cidr": "10.0.1.7/24" has host bits set`}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := validateJSON(t, docJSON(nil, vpcDoc("main", tc.vpc), subnetDoc("a", "main", tc.subnet)))
			checkRows(t, rows, tc.want...)
			for _, r := range rows {
				if r.ID != RowInvalidCIDR {
					t.Errorf("row %+v: want %s", r, RowInvalidCIDR)
				}
				if tc.resolution != "" && r.Resolution != tc.resolution {
					t.Errorf("resolution %q, want %q", r.Resolution, tc.resolution)
				}
			}
		})
	}
	rows := validateJSON(t, docJSON(nil, vpcDoc("main", "10.0.0.0/16"), subnetDoc("a", "main", "10.0.1.7/24")))
	if len(rows) != 1 || rows[0].Resolution != `write "10.0.1.0/24": the cloud stores the block masked, so this one would differ from it on every plan` {
		t.Errorf("host bits: %+v, want the masked block to write", rows)
	}
}

// A subnet whose VPC the document lacks is one dangling reference, and no
// guess about its block.
func TestCheckWithinVPCNotInDocument(t *testing.T) {
	rows := validateJSON(t, docJSON(nil, subnetDoc("a", "gone", "192.168.0.0/24")))
	checkRows(t, rows, row{"aws/subnet/a", `field "vpc" refers to aws/vpc/gone, which is not in the document`})
	if len(rows) == 1 && rows[0].ID != RowDanglingReference {
		t.Errorf("row %+v, want %s", rows[0], RowDanglingReference)
	}
}

func TestParseCIDR(t *testing.T) {
	if p, bad := ParseCIDR("10.0.0.0/16"); bad != nil || p.String() != "10.0.0.0/16" {
		t.Errorf("ParseCIDR(10.0.0.0/16) = %v, %v", p, bad)
	}
	for _, s := range []string{"", "10.0.0.0", "10.0.0.1/16", "::/0", "::ffff:10.0.0.0/104", "10.0.0.0/16 "} {
		if _, bad := ParseCIDR(s); bad == nil {
			t.Errorf("ParseCIDR(%q) accepted it", s)
		}
	}
}
