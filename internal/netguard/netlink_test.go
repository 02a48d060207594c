//go:build linux

package netguard

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// unhex reads bytes written as hex with spaces and line breaks between groups.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The expected bytes are written out by hand from rtnetlink(7), little-endian.
func littleEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the expected messages are written little-endian")
	}
}

var dockerDefault = Route{
	Family: syscall.AF_INET, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN, Protocol: syscall.RTPROT_BOOT,
	Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("172.18.0.1"), OIF: 12,
}

func TestEncodeRoute(t *testing.T) {
	littleEndian(t)
	for _, tc := range []struct {
		name       string
		typ, flags uint16
		seq        uint32
		route      Route
		want       string
	}{
		{
			name: "delete Docker's default route", typ: syscall.RTM_DELROUTE, flags: syscall.NLM_F_REQUEST | syscall.NLM_F_ACK, seq: 1,
			route: dockerDefault,
			want: `34000000 1900 0500 01000000 00000000
			       02 00 00 00 fe 03 00 01 00000000
			       0800 0f00 fe000000
			       0800 0500 ac120001
			       0800 0400 0c000000`,
		},
		{
			name: "add an unreachable host route for the gateway", typ: syscall.RTM_NEWROUTE,
			flags: syscall.NLM_F_REQUEST | syscall.NLM_F_ACK | syscall.NLM_F_CREATE | syscall.NLM_F_REPLACE, seq: 2,
			route: Route{Family: syscall.AF_INET, Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN,
				Protocol: syscall.RTPROT_STATIC, Dst: netip.MustParsePrefix("172.18.0.1/32")},
			want: `2c000000 1800 0505 02000000 00000000
			       02 20 00 00 fe 04 00 07 00000000
			       0800 0f00 fe000000
			       0800 0100 ac120001`,
		},
		{
			name: "look up a route: no table, no flags beyond the request", typ: syscall.RTM_GETROUTE, flags: syscall.NLM_F_REQUEST, seq: 3,
			route: Route{Family: syscall.AF_INET, Dst: netip.MustParsePrefix("192.0.2.1/32")},
			want: `24000000 1a00 0100 03000000 00000000
			       02 20 00 00 00 00 00 00 00000000
			       0800 0100 c0000201`,
		},
		{
			name: "IPv6 default route with a metric, in a table above 255", typ: syscall.RTM_DELROUTE, flags: syscall.NLM_F_REQUEST | syscall.NLM_F_ACK, seq: 4,
			route: Route{Family: syscall.AF_INET6, Type: syscall.RTN_UNICAST, Table: 1000, Protocol: syscall.RTPROT_BOOT,
				Dst: netip.MustParsePrefix("::/0"), Gateway: netip.MustParseAddr("fd00::1"), OIF: 7, Priority: 1024},
			want: `48000000 1900 0500 04000000 00000000
			       0a 00 00 00 00 03 00 01 00000000
			       0800 0f00 e8030000
			       1400 0500 fd000000000000000000000000000001
			       0800 0400 07000000
			       0800 0600 00040000`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeRoute(tc.typ, tc.flags, tc.seq, tc.route)
			if want := unhex(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("encodeRoute:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// message is one netlink message as the kernel would send it: header, then payload.
func message(t *testing.T, typ uint16, payload string) []byte {
	t.Helper()
	p := unhex(t, payload)
	h := make([]byte, syscall.SizeofNlMsghdr)
	binary.NativeEndian.PutUint32(h[0:], uint32(len(h)+len(p)))
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint32(h[8:], 9)
	return append(h, p...)
}

func TestDecodeReplies(t *testing.T) {
	littleEndian(t)
	// The two routes `ip route` shows in a container on a Docker bridge network, as one dump.
	defaultRoute := `02 00 00 00 fe 03 00 01 00000000
	                 0800 0f00 fe000000
	                 0800 0500 ac120001
	                 0800 0400 0c000000`
	subnetRoute := `02 10 00 00 fe 02 fd 01 00000000
	                0800 0f00 fe000000
	                0800 0100 ac120000
	                0800 0700 ac120002
	                0800 0400 0c000000`
	subnet := Route{Family: syscall.AF_INET, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN,
		Protocol: syscall.RTPROT_KERNEL, Scope: syscall.RT_SCOPE_LINK, Dst: netip.MustParsePrefix("172.18.0.0/16"), OIF: 12}
	done := message(t, syscall.NLMSG_DONE, "00000000")
	join := func(ms ...[]byte) []byte {
		var b []byte
		for _, m := range ms {
			b = append(b, m...)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		in      []byte
		want    []Route
		wantErr error
		errText string
	}{
		{
			name: "a dump: the default route and the subnet", want: []Route{dockerDefault, subnet},
			in: join(message(t, syscall.RTM_NEWROUTE, defaultRoute), message(t, syscall.RTM_NEWROUTE, subnetRoute), done),
		},
		{
			name: "an IPv6 default route carries no RTA_DST; its table is in RTA_TABLE only",
			in: join(message(t, syscall.RTM_NEWROUTE, `0a 00 00 00 00 03 00 01 00000000
			                                          0800 0f00 e8030000
			                                          1400 0500 fd000000000000000000000000000001
			                                          0800 0600 00040000`), done),
			want: []Route{{Family: syscall.AF_INET6, Type: syscall.RTN_UNICAST, Table: 1000, Protocol: syscall.RTPROT_BOOT,
				Dst: netip.MustParsePrefix("::/0"), Gateway: netip.MustParseAddr("fd00::1"), Priority: 1024}},
		},
		{
			name: "a multipath default route is marked",
			in:   join(message(t, syscall.RTM_NEWROUTE, `02 00 00 00 fe 03 00 01 00000000 0c00 0900 08000000 0c000000`), done),
			want: []Route{{Family: syscall.AF_INET, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN, Protocol: syscall.RTPROT_BOOT,
				Dst: netip.MustParsePrefix("0.0.0.0/0"), Multipath: true}},
		},
		{
			name: "an acknowledgement", in: message(t, syscall.NLMSG_ERROR, "00000000 "+strings.Repeat("00", 16)),
		},
		{
			name: "the kernel refuses: EPERM", in: message(t, syscall.NLMSG_ERROR, "ffffffff "+strings.Repeat("00", 16)),
			wantErr: syscall.EPERM,
		},
		{
			name: "a lookup with no route: EHOSTUNREACH", in: message(t, syscall.NLMSG_ERROR, "8fffffff "+strings.Repeat("00", 16)),
			wantErr: syscall.EHOSTUNREACH,
		},
		{
			name: "a route message shorter than its header", in: message(t, syscall.RTM_NEWROUTE, "02 00 00 00"),
			errText: "shorter than its header",
		},
		{
			name: "a prefix longer than the address", in: message(t, syscall.RTM_NEWROUTE, "02 21 00 00 fe 03 00 01 00000000 0800 0100 ac120001"),
			errText: "172.18.0.1/33",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := syscall.ParseNetlinkMessage(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeReplies(msgs)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
			case tc.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.errText)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// What hold sends, the kernel echoes in a dump: every route netguard writes decodes to itself.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, r := range []Route{
		dockerDefault,
		{Family: syscall.AF_INET, Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN, Protocol: syscall.RTPROT_STATIC,
			Dst: netip.MustParsePrefix("172.18.0.1/32")},
		{Family: syscall.AF_INET6, Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN, Protocol: syscall.RTPROT_STATIC,
			Dst: netip.MustParsePrefix("fd00::1/128"), Priority: 1024},
	} {
		b := encodeRoute(syscall.RTM_NEWROUTE, 0, 1, r)
		msgs, err := syscall.ParseNetlinkMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeReplies(msgs)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], r) {
			t.Errorf("%s: decoded %+v, %v", r, got, err)
		}
	}
}
