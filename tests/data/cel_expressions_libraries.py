"""Selector expressions for the libraries Kubernetes' DRA CEL environment offers beyond the first table: timestamps
and durations, url, ip and cidr, string format, Kubernetes' named formats, sortBy, the two-variable
transforms, optional types in full, the empty list's element type, RE2, the cost limit (estimated at admission,
counted at run time) and `includes` (StoredExpressions only). regen_cel_table.py records cel-go's answers to
them on every device; tests/test_dra_cel.py holds the reference to those answers.
"""

from __future__ import annotations

import random

D = "gpu.example.com"
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'

TIME = [
    'timestamp("2024-01-01T10:00:00Z") < timestamp("2025-01-01T00:00:00Z")',
    'timestamp("2024-01-01T10:00:00+02:00") == timestamp("2024-01-01T08:00:00Z")',
    'string(timestamp("2024-01-01T10:00:00+02:00")) == "2024-01-01T10:00:00+02:00"',
    'string(timestamp("2024-01-01T10:00:00.100Z") + duration("1.5s")) == "2024-01-01T10:00:01.6Z"',
    'string(timestamp("2024-01-01T10:00:00.123456789Z")) == "2024-01-01T10:00:00.123456789Z"',
    'string(timestamp("2024-01-01T10:00:00.1234567891Z")) == "2024-01-01T10:00:00.123456789Z"',
    'string(timestamp(0)) == "1970-01-01T00:00:00Z"', 'string(timestamp(-1)) == "1969-12-31T23:59:59Z"',
    'timestamp("2024-13-01T00:00:00Z") > timestamp(0)', 'timestamp("2024-02-30T00:00:00Z") > timestamp(0)',
    'timestamp("2024-02-29T00:00:00Z") > timestamp(0)', 'timestamp("2023-02-29T00:00:00Z") > timestamp(0)',
    'timestamp("2024-01-01 10:00:00Z") > timestamp(0)', 'timestamp("2024-01-01t10:00:00z") > timestamp(0)',
    'timestamp("2024-01-01T24:00:00Z") > timestamp(0)', 'timestamp("2024-01-01T10:00:60Z") > timestamp(0)',
    'timestamp("2024-01-01T10:00:00+24:00") > timestamp(0)', 'timestamp("2024-01-01T10:00:00") > timestamp(0)',
    'timestamp("0001-01-01T00:00:00Z") == timestamp(-62135596800)',
    'timestamp("0000-12-31T23:59:59Z") > timestamp(0)', 'timestamp("9999-12-31T23:59:59Z") > timestamp(0)',
    'timestamp("9999-12-31T23:59:59Z") + duration("1s") > timestamp(0)',
    'timestamp("0001-01-01T00:00:00Z") - duration("1ns") < timestamp(0)',
    'timestamp(253402300800) > timestamp(0)', 'timestamp(-62135596801) < timestamp(0)',
    'timestamp(dyn(253402300800)) > timestamp(0)', 'timestamp(dyn("bad")) > timestamp(0)',
    'timestamp(1) - timestamp(0) == duration("1s")', 'timestamp(0) - timestamp(1) == duration("-1s")',
    'string(timestamp(0) - timestamp(1)) == "-1s"',
    'timestamp("9999-12-31T23:59:59Z") - timestamp("0001-01-01T00:00:00Z") > duration("0")',
    'timestamp(5) + duration("1s") == duration("1s") + timestamp(5)', 'timestamp(5) - duration("5s") == timestamp(0)',
    'timestamp(0) + duration("-1ns") < timestamp(0)', 'int(timestamp(0) + duration("-1ns")) == -1',
    'int(timestamp("2024-01-01T00:00:00Z")) == 1704067200', 'int(timestamp("1969-12-31T23:59:59.5Z")) == -1',
    'timestamp("2024-01-01T10:00:00Z").getHours() == 10',
    'timestamp("2024-01-01T10:00:00+02:00").getHours() == 8',
    'timestamp("2024-01-01T10:00:00Z").getHours("America/New_York") == 5',
    'timestamp("2024-07-01T10:00:00Z").getHours("America/New_York") == 6',
    'timestamp("2024-01-01T10:00:00Z").getHours("+05:30") == 15',
    'timestamp("2024-01-01T10:00:00Z").getMinutes("+05:30") == 30',
    'timestamp("2024-01-01T10:00:00Z").getHours("-05:30") == 4',
    'timestamp("2024-01-01T10:00:00Z").getHours("Mars/Olympus") == 1',
    'timestamp("2024-01-01T10:00:00Z").getHours("x:00") == 1', 'timestamp("2024-01-01T10:00:00Z").getHours("UTC") == 10',
    'timestamp("2024-01-01T10:00:00Z").getHours("") == 10',
    'timestamp("2024-01-01T10:00:00Z").getDayOfWeek() == 1', 'timestamp("2024-03-01T00:00:00Z").getDayOfYear() == 60',
    'timestamp("2024-03-01T00:00:00Z").getMonth() == 2', 'timestamp("2024-03-01T00:00:00Z").getDate() == 1',
    'timestamp("2024-03-01T00:00:00Z").getDayOfMonth() == 0', 'timestamp("2024-03-01T00:00:00Z").getFullYear() == 2024',
    'timestamp("2024-03-01T00:00:00Z").getFullYear("Pacific/Honolulu") == 2024',
    'timestamp("2024-03-01T00:00:00.999Z").getMilliseconds() == 999',
    'timestamp("2024-03-01T00:00:07Z").getSeconds() == 7', 'timestamp("2024-03-01T00:00:07Z").getSeconds("+01:00") == 7',
    'duration("1h30m").getMinutes() == 90', 'duration("-90s").getMinutes() == -1', 'duration("1h59m").getHours() == 1',
    'duration("1.999s").getSeconds() == 1', 'duration("1.5ms").getMilliseconds() == 1',
    'duration("-1.5ms").getMilliseconds() == -1',
    'string(duration("1h30m")) == "5400s"', 'string(duration("-1.5us")) == "-0.0000015s"', 'string(duration("0")) == "0s"',
    'string(duration("1.000000001s")) == "1.000000001s"', 'string(duration("2562047h")) == "9223200000s"',
    'duration("1d") > duration("0")', 'duration("1") > duration("0")', 'duration("") > duration("0")',
    'duration(".5s") == duration("500ms")', 'duration("5.s") == duration("5s")', 'duration("1h1h") == duration("2h")',
    'duration("1µs") == duration("1us")', 'duration("1μs") == duration("1000ns")', 'duration("+1s") == duration("1s")',
    'duration("-0") == duration("0")', 'duration("1.2.3s") > duration("0")', 'duration("0.1234567891s") > duration("0")',
    'duration(5) > duration("0")', 'duration(dyn(5)) > duration("0")', 'duration(dyn("5s")) == duration("5s")',
    'duration("2562047h47m16.854775807s") > duration("0")', 'duration("2562047h47m16.854775808s") > duration("0")',
    'duration("-2562047h47m16.854775808s") < duration("0")', '-duration("-2562047h47m16.854775808s") > duration("0")',
    'duration("2562047h") + duration("2562047h") > duration("0")',
    'duration("-2562047h") - duration("2562047h") < duration("0")',
    'int(duration("1ms")) == 1000000', 'duration("1h") == duration("60m")', 'duration("1s") < duration("1001ms")',
    '[duration("1s"), duration("2s")].sum() == duration("3s")', '[duration("2s"), duration("1s")].min() == duration("1s")',
    '[timestamp(2), timestamp(1)].sort()[0] == timestamp(1)', '[timestamp(1), timestamp(2)].isSorted()',
    '[timestamp(2), timestamp(1)].max() == timestamp(2)', 'timestamp(1) in [timestamp(1)]',
    'type(timestamp(0)) == google.protobuf.Timestamp', 'type(duration("1s")) == google.protobuf.Duration',
    'dyn(timestamp(0)) < dyn(1)', 'dyn(duration("1s")) + dyn(1) == 1', 'dyn(timestamp(0)) * 2 == 0',
    'dyn(duration("1s")).getHours() == 0', 'dyn(timestamp(0)).getHours() == 0',
    'timestamp(0).getHours(dyn(1)) == 0',
    f'timestamp({A}.built) > timestamp(0)', f'duration({A}.ttl) > duration("1m")',
    f'timestamp({A}.built) + duration({A}.ttl) > timestamp({A}.built)',
    'google.protobuf.Timestamp{seconds: 1} == timestamp(1)',
]

URL = [
    'url("https://x.io/p").getHost() == "x.io"', 'isURL("nope")', 'isURL("http://a b")', 'isURL("mailto:x@y")',
    'isURL("/relative")', 'isURL("")', 'isURL("*")', 'isURL("http://[::1")', 'isURL("https://h/%zz")',
    'url("https://user:pa%20ss@Example.com:8080/a%2Fb/c?x=1&y=%20#frag").getEscapedPath() == "/a%2Fb/c"',
    'url("https://Example.com:8080/x").getHost() == "Example.com:8080"',
    'url("https://Example.com:8080/x").getHostname() == "Example.com"',
    'url("https://Example.com:8080/x").getPort() == "8080"', 'url("https://Example.com/x").getPort() == ""',
    'url("HTTPS://x/").getScheme() == "https"', 'url("https://[::1]:80/x").getHostname() == "::1"',
    'url("https://[::1]:80/x").getPort() == "80"', 'url("https://[::1%25eth0]:80/x").getHostname() == "::1%eth0"',
    'url("https://[1.2.3.4]/").getHost() == ""', 'url("https://[::1]x/").getHost() == ""',
    'url("https://h/x?a=1&a=2&b=%zz&c").getQuery() == {"a": ["1", "2"], "c": [""]}',
    'url("https://h/x?a=1;b=2").getQuery() == {}', 'url("https://h/x?a+b=c+d").getQuery() == {"a b": ["c d"]}',
    'url("https://h/x?").getQuery() == {}', 'url("https://h/a b").getEscapedPath() == "/a%20b"',
    'url("https://h/a%2fb").getEscapedPath() == "/a%2fb"', 'url("https://h/a%41b").getEscapedPath() == "/aAb"',
    'url("https://h/é").getEscapedPath() == "/%C3%A9"', 'url("https://h/a?b#c").getEscapedPath() == "/a"',
    'url("/relative") == url("/relative")', 'url("https://h/a") == url("https://h/%61")',
    'url("https://h/a") == url("https://H/a")', 'url("https://h") != url("https://h/")',
    'url("nope") == url("nope")', 'url("https://h:1:2/") == url("https://h/")', 'url("https://h:x/") == url("https://h/")',
    'url("ftp://h:1:2/").getPort() == "2"', 'url("https://a@b@c/").getHost() == "c"',
    'url("https://u:p@h/").getHost() == "h"', 'url("https://u p@h/").getHost() == "h"',
    'url("https://h%20x/").getHost() == "h x"', 'url("https://h%2/").getHost() == ""',
    'url("https://h/\\x01").getHost() == "h"', 'url("urn:isbn:123").getHost() == ""',
    'url("urn:isbn:123").getEscapedPath() == ""', 'url("*").getEscapedPath() == "*"',
    'url("https://h/%").getHost() == "h"', 'url("//h/x").getHost() == "h"',
    'url("https://h/x") == url("https://h/x#frag")', 'url("https://h/x#a%20b") == url("https://h/x#a b")',
    'url("https://h/x#%zz") == url("https://h/x")', 'url(dyn(1)).getHost() == ""', 'url("x").getHost() == ""',
    f'url({A}.endpoint).getPort() == "8443"', f'url({A}.endpoint).getQuery()["v"][0] == "1"',
    f'url({A}.endpoint).getHostname().endsWith(".example.com")', 'type(url("/a")) == type(url("/b"))',
    'url("/a") == dyn("/a")', 'dyn(url("/a")) in [url("/a")]',
]

NET = [
    'ip("10.0.0.1").family() == 4', 'ip("::1").family() == 6', 'ip("::1").isLoopback()', 'ip("127.1.2.3").isLoopback()',
    'ip("fe80::1").isLinkLocalUnicast()', 'ip("169.254.1.1").isLinkLocalUnicast()',
    'ip("224.0.0.1").isLinkLocalMulticast()', 'ip("ff02::1").isLinkLocalMulticast()', 'ip("8.8.8.8").isGlobalUnicast()',
    'ip("255.255.255.255").isGlobalUnicast()', 'ip("0.0.0.0").isUnspecified()', 'ip("::").isUnspecified()',
    'ip("2001:db8::1").isGlobalUnicast()', 'ip("ff00::1").isGlobalUnicast()',
    'ip("01.2.3.4") == ip("1.2.3.4")', 'ip("::ffff:1.2.3.4") == ip("1.2.3.4")', 'ip("fe80::1%eth0") == ip("fe80::1")',
    'ip("1.2.3") == ip("1.2.3.0")', 'ip("1.2.3.4.5") == ip("1.2.3.4")', 'ip("256.1.1.1") == ip("1.1.1.1")',
    'ip("1..2.3") == ip("1.1.2.3")', 'ip("x") == ip("1.1.1.1")', 'ip("") == ip("1.1.1.1")', 'ip("%x") == ip("::1")',
    'ip("1:2:3:4:5:6:7:8:9") == ip("::1")', 'ip("1::2::3") == ip("::1")', 'ip("12345::") == ip("::1")',
    'ip(":1") == ip("::1")', 'ip("1:") == ip("::1")', 'ip("::1.2.3.4") == ip("::102:304")',
    'ip("1:2:3:4:5:6:1.2.3.4") == ip("1:2:3:4:5:6:102:304")', 'ip("1:2:3:4:5:6:7:1.2.3.4") == ip("::1")',
    'ip("fe80::1%") == ip("fe80::1")', 'ip("1:2:3:4:5:6:7::") == ip("1:2:3:4:5:6:7:0")',
    'ip("1:2:3:4:5:6:7:8::") == ip("::1")', 'ip("1:2:3:4:5:6:7") == ip("::1")',
    'string(ip("2001:db8:0:0:1:0:0:1")) == "2001:db8::1:0:0:1"', 'string(ip("2001:DB8::1")) == "2001:db8::1"',
    'string(ip("0:0:1:0:0:0:0:1")) == "0:0:1::1"', 'string(ip("1:0:0:2:0:0:0:3")) == "1:0:0:2::3"',
    'string(ip("::ffff:0:1.2.3.4")) == "::ffff:0:102:304"', 'string(ip("1.2.3.4")) == "1.2.3.4"',
    'ip.isCanonical("2001:DB8::1")', 'ip.isCanonical("2001:db8::1")', 'ip.isCanonical("1.2.3.4")',
    'ip.isCanonical("bad")', 'isIP("1.2.3.4")', 'isIP("::1%eth0")', 'isIP("::ffff:1.2.3.4")', 'isIP("1.2.3.4/8")',
    'cidr("10.0.0.0/8").containsIP("10.1.2.3")', 'cidr("10.0.0.0/8").containsIP(ip("11.1.2.3"))',
    'cidr("10.0.0.0/8").containsIP("bad")', 'cidr("10.0.0.0/8").containsIP("::1")',
    'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', 'cidr("10.0.0.0/8").containsCIDR("10.0.0.0/7")',
    'cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/8"))', 'cidr("10.0.0.0/8").containsCIDR("bad")',
    'cidr("0.0.0.0/0").containsCIDR("1.2.3.4/32")', 'cidr("::/0").containsIP("1.2.3.4")',
    'cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8")', 'cidr("10.1.2.3/8") == cidr("10.0.0.0/8")',
    'string(cidr("10.1.2.3/8").masked()) == "10.0.0.0/8"', 'string(cidr("::1/64").ip()) == "::1"',
    'cidr("10.0.0.0/33").prefixLength() == 33', 'cidr("10.0.0.0/08").prefixLength() == 8',
    'cidr("10.0.0.0/-1").prefixLength() == 8', 'cidr("10.0.0.0/+8").prefixLength() == 8', 'cidr("10.0.0.0").prefixLength() == 8',
    'cidr("10.0.0.0/").prefixLength() == 8', 'cidr("fe80::1%eth0/64").prefixLength() == 64',
    'cidr("::ffff:1.2.3.4/120").prefixLength() == 120', 'cidr("::/128").prefixLength() == 128',
    'cidr("2001:db8::/32").prefixLength() == 32', 'isCIDR("::/0")', 'isCIDR("1.2.3.4")', 'isCIDR("1.2.3.4/32")',
    'ip("1.2.3.4") == cidr("1.2.3.4/32").ip()', 'cidr("1.2.3.4/24").ip() == ip("1.2.3.4")',
    'string(cidr("1.2.3.4/24")) == "1.2.3.4/24"', 'ip("1.2.3.4") == dyn(cidr("1.2.3.4/32"))',
    'dyn(ip("1.2.3.4")) == dyn("1.2.3.4")', 'type(ip("1.2.3.4")) == net.IP', 'type(cidr("::/0")) == net.CIDR',
    f'ip({A}.addr).family() == 4', f'cidr({A}.subnet).containsIP({A}.addr)', f'cidr({A}.subnet).containsIP(ip({A}.addr))',
    f'ip({A}.addr) in [ip("10.0.0.5"), ip("10.0.0.6")]', f'isIP({A}.model)',
]

FORMAT = [
    '"%s-%d".format(["a", 1]) == "a-1"', '"%.2f".format([1234.5]) == "1,234.50"',
    '"%e".format([1234.5]) == "1.234500×10⁰³"', '"%.3e".format([-0.000123]) == "-1.230000×10⁻⁰⁴"',
    '"%.12e".format([double("nan")]) == "         NaN"', '"%e".format(["-Infinity"]) == "    -∞"',
    '"%f".format([double("inf")]) == "∞"', '"%f".format([double("nan")]) == "NaN"', '"%f".format(["NaN"]) == "NaN"',
    '"%f".format(["x"]) == "x"', '"%.2f".format([-0.0000001]) == "-0.00"', '"%f".format([-0.0]) == "0.000000"',
    '"%.2f".format([1e20]) == "100,000,000,000,000,000,000.00"', '"%.0f|%.10f".format([2.5, 0.1]) == "2|0.1000000000"',
    '"%s".format([[1.5, "a", b"x", null, int, timestamp(0), duration("1s")]]) == ""',
    '"%s".format([[1.5, "a", b"x", null, int, timestamp(0), duration("1s")]]) == "[1.500000, \\"a\\", b\\"x\\", null, int, timestamp(\\"1970-01-01T00:00:00Z\\"), duration(\\"1s\\")]"',
    '"%s".format([{"b": 1, "a": [true]}]) == "{\\"a\\":[true], \\"b\\":1}"', '"%s".format([{1: "x", 2u: "y"}]) == ""',
    '"%s".format([{1.5: "x"}]) == ""', '"%s".format([dyn({1.5: "x"})]) == ""',
    '"%d %x %X %o %b".format([255, 255, "hi", 8u, true]) == "255 ff 6869 10 1"',
    '"%X %b %o".format([-255, -5, -8]) == "-FF -101 -10"', '"%x".format([b"\\xff\\x01"]) == "ff01"',
    '"%x".format(["é"]) == "c3a9"', '"%s %s".format([1e21, 1.0]) == "1e+21 1"', '"%s".format([dyn(1.5)]) == "1.5"',
    '"%s".format([[double("inf"), double("nan")]]) == "[\\"+Inf\\", \\"NaN\\"]"', '"100%%".format([]) == "100%"',
    '"%".format([1]) == ""', '"%z".format([1]) == ""', '"%s".format([1, 2]) == ""', '"%s %s".format([1]) == ""',
    '"%s %s".format(dyn([1])) == ""', '"%d".format(["x"]) == ""', '"%d".format(dyn(["x"])) == ""',
    '"%.f".format([1.0]) == ""', '"%.".format([1.0]) == ""', '"%f".format([1]) == ""', '"%b".format([1.5]) == ""',
    '"%o".format(["x"]) == ""', '"%x".format([1.5]) == ""', '"%e".format([1]) == ""', '"%s".format([quantity("1")]) == ""',
    '"%s".format(dyn([quantity("1")])) == ""', '"%d".format([dyn(1.5)]) == ""', '"%s".format([[quantity("1")]]) == ""',
    f'"%s/%d".format([{A}.model, {A}.cores]) == "a100/8"', f'"%s".format([{A}]).size() > 10',
    '"%s".format(["a", dyn(1)]) == ""', '("%" + "d").format([1]) == "1"', '"%s".format([optional.of(1)]) == ""',
    'strings.quote("a\\"b\\n") == "\\"a\\\\\\"b\\\\n\\""', 'strings.quote("é\\t") == "\\"é\\\\t\\""', '"ab".quote() == ""',
    '"ab".reverse() == "ba"',
]

NAMED = [
    'format.dns1123Label().validate("my-name").hasValue()', 'format.dns1123Label().validate("My_Name").value()[0] == ""',
    'format.dns1123Label().validate("My_Name").value() == ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')"]',
    'format.named("dns1123Label").value().validate("a.b").value() == ["must not contain dots"]',
    'format.dns1123Label().validate("a" * 64).value().size() == 1', 'format.named("nope").hasValue()',
    'format.labelValue().validate("x_" + "y").hasValue()', 'format.labelValue().validate("-x").value().size() == 1',
    'format.qualifiedName().validate("example.com/My.Name").hasValue()',
    'format.qualifiedName().validate("a/b/c").value().size() == 1', 'format.qualifiedName().validate("/x").value().size() == 1',
    'format.qualifiedName().validate("Ex.com/x").value().size() == 1', 'format.qualifiedName().validate("x/").value().size() == 1',
    'format.uuid().validate("00000000-0000-0000-0000-000000000000").hasValue()',
    'format.uuid().validate("0000000000000000000000000000000G").value() == ["does not match the UUID format"]',
    'format.date().validate("2024-02-30").value() == ["invalid date"]', 'format.date().validate("2024-02-29").hasValue()',
    'format.datetime().validate("2024-02-28T10:00:00Z").hasValue()', 'format.datetime().validate("2024-02-28t10:00:00.5+01:00").hasValue()',
    'format.datetime().validate("2024-02-28T25:00:00Z").hasValue()', 'format.datetime().validate("2024-02-28").hasValue()',
    'format.byte().validate("aGk=").hasValue()', 'format.byte().validate("aGk").hasValue()',
    'format.uri().validate("nope").value()[0] == ""', 'format.uri().validate("https://x/y").hasValue()',
    'format.dns1123LabelPrefix().validate("ab-").hasValue()', 'format.dns1123SubdomainPrefix().validate("a.b-").hasValue()',
    'format.dns1035LabelPrefix().validate("1ab-").value().size() == 1', 'format.dns1035Label().validate("1ab").value().size() == 1',
    'format.dns1123Subdomain().validate("A.b").value().size() == 1', 'format.dns1123Subdomain().validate("a.b").hasValue()',
    'format.dns1123Label() == format.named("dns1123Label").value()', 'format.dns1123Label() == format.dns1035Label()',
    f'format.dns1123Label().validate({A}.model).hasValue()', f'!format.labelValue().validate({A}.model).hasValue()',
    'type(format.uri()) == type(format.uuid())',
]

MACROS = [
    '[3, 1, 2].sortBy(x, -x) == [3, 2, 1]', '["bb", "a", "ccc"].sortBy(s, s.size()) == ["a", "bb", "ccc"]',
    '[1, 2, 3].sortBy(x, dyn(x % 2 == 0 ? "a" : 1)) == [1]', '[].sortBy(x, x) == []', '[1].sortBy(x, [x]) == [1]',
    '[1, 2].sortBy(x, 1 / 0) == []', '"ab".sortBy(x, x) == []', '{"a": 1}.sortBy(k, k) == []',
    f'{A}.model.split("").sortBy(c, c) == ["0", "0", "1", "a"]', '[5, 3, 5, 1, 3].sortBy(x, x / 2) == [1, 3, 3, 5, 5]',
    '[[2], [1]].sortBy(l, l[0]) == [[1], [2]]', '[1.5, 0.5].sortBy(x, x) == [0.5, 1.5]',
    '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14].sortBy(x, x % 3) == [3, 6, 9, 12, 1, 4, 7, 10, 13, 2, 5, 8, 11, 14]',
    'lists.range(40).sortBy(x, x % 4).map(x, x % 4).isSorted()', 'lists.range(40).sortBy(x, x % 4)[10] == 8',
    '[1, 2].sortBy(x, dyn([1u, 2][x - 1])) == [1, 2]',
    '{"a": 1, "b": 2}.transformMapEntry(k, v, {v: k}) == {1: "a", 2: "b"}',
    '{"a": 1, "b": 2}.transformMapEntry(k, v, {1: k}) == {}', '[1, 2].transformMapEntry(i, v, {v: i}) == {1: 0, 2: 1}',
    '{"a": 1}.transformMapEntry(k, v, v > 0, {k: v}) == {"a": 1}', '{"a": 1}.transformMapEntry(k, v, {}) == {}',
    '[1, 2].transformMap(i, v, v) == {0: 1, 1: 2}', '{"a": 1, "b": 2}.transformList(k, v, v).sum() == 3',
    '[1, 1].transformMapEntry(i, v, {v: i}) == {}', f'{A}.transformMapEntry(k, v, {{k: k.size()}}).size() >= 4',
    'optional.of(2).optMap(x, x * 2).value() == 4', 'optional.none().optMap(x, x * 2).hasValue()',
    'optional.of({"a": 1}).optFlatMap(m, m.?a).value() == 1', 'optional.of({"a": 1}).optFlatMap(m, m.?b).hasValue()',
    'optional.of(1).optMap(x, 1 / 0).hasValue()', 'optional.of(1).optFlatMap(x, x) == 1',
    f'{A}.?model.optMap(m, m.size()).orValue(0) == 4', f'{A}.?nope.optMap(m, m.size()).orValue(0) == 0',
    'cel.bind(x, 1 / 0, true)', 'cel.bind(x, 1 / 0, x > 0 || true)', 'cel.bind(x, [1, 2], x.map(y, y + x.size()))[1] == 4',
    '[1, 2].exists(x, cel.bind(y, x * 2, y == 4))',
]

OPTIONAL = [
    '[?optional.of(1), ?optional.none(), 3] == [1, 3]', '{?"a": optional.none(), "b": 2} == {"b": 2}',
    '{?"a": optional.of(1)} == {"a": 1}', '[?dyn(1)] == [1]', '{?"a": dyn(1)} == {"a": 1}', '[?1] == [1]',
    f'[?{A}.model].size() == 1',
    'optional.unwrap([optional.of(1), optional.none()]) == [1]', '[optional.of(1)].unwrapOpt() == [1]',
    'optional.unwrap(dyn([1])) == []', 'optional.unwrap([]) == []',
    'optional.none().or(optional.of(1)).value() == 1', 'optional.of(1).orValue(1 / 0) == 1',
    'optional.of(1).or(dyn(1 / 0)).value() == 1', 'optional.none().orValue(1 / 0) == 1', 'dyn(1).orValue(2) == 1',
    'dyn(1).or(optional.of(2)) == 1', 'optional.ofNonZeroValue(timestamp(0)).hasValue()',
    'optional.ofNonZeroValue(duration("0")).hasValue()', 'optional.ofNonZeroValue(optional.none()).hasValue()',
    'optional.ofNonZeroValue({}).hasValue()', 'optional.ofNonZeroValue(0u).hasValue()', 'optional.ofNonZeroValue(0.0).hasValue()',
    'optional.ofNonZeroValue(quantity("0")).hasValue()', 'optional.of(1) == 1', 'optional.of([1])[0].value() == 1',
    'optional.of({"a": 1}).a.value() == 1', 'optional.of({"a": 1})["b"].hasValue()', 'optional.none()[0].hasValue()',
    'optional.of([1])[?1].hasValue()', 'optional.of({"a": {"b": 1}}).?a.?b.value() == 1', '{"a": 1}.?a.value() == 1',
    '[1][?dyn("x")].hasValue()', '{"a": 1}[?1].hasValue()', 'has(optional.of({"a": 1}).a)',
    f'device.attributes.?["{D}"].?model.value() == "a100"', f'{A}[?"model"].orValue("") == "a100"',
    f'{A}.?missing.or({A}.?model).value() == "a100"', f'[?{A}.?model, ?{A}.?missing].size() == 1',
    f'{{?"m": {A}.?model}}.size() == 1', 'optional.of(1).value() + optional.none().orValue(1) == 2',
    'type(optional.of(1)) == optional_type', 'optional.of(1) in [optional.of(1)]',
]

EMPTY_LIST = [
    '[].sort().join("-") == ""', '[].filter(x, x != 1).join("-") == ""', '[].map(x, x).join("-") == ""',
    '[].join("-") == ""', '[].sort() == []', '[].reverse().join() == ""', '[].distinct().join() == ""',
    '[] + ["a"] == ["a"]', '([] + ["a"]).join() == "a"', '[].sum() == 0', '[].sum() == 0.0', '[].max() == 0',
    '[].sort().sum() == 0', '[].sort() + ["a"] == ["a"]', '[].slice(0, 0).join() == ""', 'size([].sort()) == 0',
    '[].all(x, x)', '[].exists(x, x.size() > 0)', '[].map(x, x + 1).join() == ""', '{}.size() == 0',
    'sets.contains([], ["a"])', '[[]].flatten().join() == ""', '[].first().orValue("") == ""',
    'cel.bind(e, [], e.sort().join() == "")', '[].sort() == [].sort()', '[].isSorted()', '[].indexOf(1) == -1',
]

RE2 = [
    '"aaa".findAll("a*") == ["aaa", ""]', '"baaac".findAll("a*") == ["", "aaa", "", ""]',
    '"abc".findAll("") == ["", "", "", ""]', '"abc".findAll("", 2) == ["", ""]', '"abc".findAll("x*") == ["", "", "", ""]',
    '"abc".matches("\\\\C")', 'matches("abc", "\\\\C")', '"abc".find("(?=a)") == ""', '"abc".find("(?P<n>b)") == "b"',
    '"abc".find("(?<n>b)") == "b"', '"x".matches("\\\\z")', '"x\\n".matches("x$")', '"x\\n".matches("(?m)x$")',
    '"a\\nb".matches("a.b")', '"a\\nb".matches("(?s)a.b")', '"é".matches("^.$")', '"é".matches("^\\\\w$")',
    '"ß".matches("(?i)SS")', '"K".matches("(?i)k")', '"abab".find("(ab)+?") == "ab"', '"aaa".find("a{2,}") == "aaa"',
    '"a".matches("a{1001}")', '"a".matches("a{2,1}")', '"a".matches("a**")', '"a".matches("(a")', '"a".matches("a)")',
    '"a".matches("[z-a]")', '"a".matches("\\\\8")', '"a".matches("[[:foo:]]")', '"a".matches("(?z)")',
    '"a".matches("\\\\")', '"a".matches("*")', '"a".matches("\\\\pN")', '"١".matches("^\\\\d$")',
    '"a".matches("\\\\Qa.\\\\E")', '"a.".matches("^\\\\Qa.\\\\E$")', '"a".matches("[[:alpha:]]")',
    '"x".find(dyn("(")) == ""', '"x".findAll(dyn("(")) == []', '"x".matches(dyn("("))', '"x".matches(dyn("a**"))',
    '"abc".find("b|bc") == "b"', '"abc".find("(a|ab)(c|bcd)") == "abc"', '"xabcx".findAll("[a-c]", 2) == ["a", "b"]',
    '"x".matches(dyn("\\\\C"))', f'{A}.model.matches("^[a-z]\\\\d+$")', f'{A}.model.findAll("\\\\d") == ["1", "0", "0"]',
]

COST = [
    'lists.range(2000).all(x, lists.range(1000).all(y, true))', 'lists.range(100).map(x, lists.range(100)).size() == 100',
    'lists.range(10).all(x, true)', 'lists.range(1000000).size() > 0', 'lists.range(200000).size() > 0',
    'lists.range(300).map(x, lists.range(300).map(y, x * y).sum()).sum() > 0',
    'lists.range(50).map(x, lists.range(50).map(y, lists.range(50).size()).sum()).sum() > 0',
    f'{A}.all(k, {A}.all(l, {A}.all(m, true)))', 'device.attributes.all(d, device.attributes[d].all(n, true))',
    'device.attributes.all(d, device.attributes[d].all(n, device.capacity.all(e, true)))',
    f'{A}.model.matches("a" + "b" * 100)', f'{A}.model.contains(device.driver)', f'{A}.model == device.driver',
    f'{A}.model + device.driver == ""', f'{A}.model.startsWith(device.driver)', f'{A}.model.split(".").size() > 0',
    f'{A}.model.replace("a", "bb") == ""', f'{A}.model.lowerAscii() == "x"', f'[{A}.model].join(",") == ""',
    f'{A}.model.indexOf("a") == 0', f'{A}.model.find("a+") == "a"', f'{A}.model.findAll("a+").size() > 0',
    'device.driver.split(".").map(s, s.size()).sum() > 3', f'url({A}.endpoint).getPort() == ""',
    f'ip({A}.addr).family() == 4', f'cidr({A}.subnet).containsCIDR({A}.subnet)', f'quantity({A}.model).isInteger()',
    f'semver({A}.model).major() == 1', f'format.dns1123Label().validate({A}.model).hasValue()',
    f'{A}.model in ["a100", "h100"]', f'{A}.model in [{A}.model, "x"]', f'sets.contains([{A}.model], ["x"])',
    f'[{A}.model, "x"].sort()[0] == "a"', f'[{A}.model, "x"].distinct().size() == 2', '[1, 2, 3].sortBy(x, -x)[0] == 3',
    f'{A}.model.size() * 1000 > 0', f'string({A}.cores).size() > 0', f'bytes({A}.model).size() > 0',
    f'strings.quote({A}.model).size() > 0', f'"%s".format([{A}.model]).size() > 0', f'{A}.model.charAt(0) == "a"',
    f'{A}.model.substring(1) == "100"', f'{A}.model.trim() == "a100"', f'[{A}.model].isSorted()',
    f'[{A}.model].min() == "a100"', f'{C}.memory.isGreaterThan(quantity("1"))', 'timestamp("2024-01-01T00:00:00Z").getHours() == 0',
    'duration("1h").getMinutes() == 60', f'{A}.model < device.driver', f'b"ab" < bytes({A}.model)',
    f'[[{A}.model]].flatten().size() == 1', f'[{A}.model].reverse().size() == 1', f'[{A}.model].slice(0, 1).size() == 1',
    'lists.range(1000).sort().size() == 1000', 'lists.range(1000).distinct().size() == 1000',
    'device.attributes.exists(d, d.size() > 1000)', 'device.capacity[device.driver].size() > 0',
    'device.attributes[device.driver].model.size() > 0', 'device.attributes.map(d, d).size() > 0',
    f'{A}.exists(k, v, v == 1)', f'{A}.transformList(k, v, k).size() > 0',
]

INCLUDES = [
    'device.driver.includes("gpu")', f'device.driver.includes("{D}")', f'{A}.model.includes("a100")',
    f'{A}.cores.includes(8)', 'device.includes(1)', '[1, 2].includes(2)', 'lists.range(50).includes(49)',
    'lists.range(49).includes(100)', 'dyn([1]).includes(1)',
]

PROTOBUF = [
    'google.protobuf.Timestamp{seconds: 1} == timestamp(1)', 'google.protobuf.Duration{seconds: 1} == duration("1s")',
    'kubernetes.DRADevice{driver: "x"}.driver == "x"', 'google.protobuf.Int64Value{value: 1} == 1',
    'type(google.protobuf.Empty) == type', 'google.protobuf.NullValue.NULL_VALUE == 0',
    'type(google.protobuf.Any) == type', 'type(kubernetes.DRADevice) == type',
]

LIBRARIES = TIME + URL + NET + FORMAT + NAMED + MACROS + OPTIONAL + EMPTY_LIST + RE2 + COST + INCLUDES + PROTOBUF


def random_library_expressions(seed: int, count: int) -> list[str]:
    """Random expressions over the newer libraries (loosely typed on purpose; seeded)."""
    rnd = random.Random(seed)
    atoms = {
        "string": ['"10.0.0.5"', '"10.0.0.0/24"', '"https://h.io:8443/p?q=1"', '"2024-05-01T12:00:00Z"', '"90s"',
                   f"{A}.model", f"{A}.addr", f"{A}.subnet", f"{A}.endpoint", f"{A}.built", f"{A}.ttl", "device.driver",
                   '"%s-%d"', '"%.2f"', '"x"'],
        "int": ["0", "1", "-3", "8", "100000", f"{A}.cores", "9223372036854775807"],
        "double": ["0.5", "-2.0", "1e10", "1234.5"],
        "list": ["[1, 2, 3]", '["a", "b"]', "lists.range(3)", f'{A}.model.split("")', '[3, 1, 2]', "[]"],
        "ts": ['timestamp("2024-05-01T12:00:00Z")', f"timestamp({A}.built)", "timestamp(0)"],
        "dur": ['duration("90s")', f"duration({A}.ttl)", 'duration("1h")', 'duration("-1ns")'],
        "ip": ['ip("10.0.0.5")', f"ip({A}.addr)", 'ip("::1")'],
        "cidr": ['cidr("10.0.0.0/24")', f"cidr({A}.subnet)", 'cidr("::/0")'],
        "url": ['url("https://h.io:8443/p?q=1")', f"url({A}.endpoint)"],
        "opt": [f"{A}.?model", f"{A}.?missing", "optional.of(1)", "optional.none()"],
    }

    def pick(kind: str) -> str:
        return rnd.choice(atoms[kind])

    def expr(kind: str, depth: int = 0) -> str:
        if depth > 2 or rnd.random() < 0.35:
            return pick(kind if kind in atoms else "string")
        if kind == "string":
            return rnd.choice([lambda: f"string({expr(rnd.choice(['ts', 'dur', 'ip', 'cidr', 'int']), depth + 1)})",
                               lambda: f"{expr('string', depth + 1)}.format([{expr(rnd.choice(['string', 'int', 'double', 'list']), depth + 1)}])",
                               lambda: f"{expr('url', depth + 1)}.{rnd.choice(['getHost', 'getPort', 'getScheme', 'getEscapedPath', 'getHostname'])}()",
                               lambda: f"strings.quote({expr('string', depth + 1)})"])()
        if kind == "ts":
            return f"{expr('ts', depth + 1)} {rnd.choice(['+', '-'])} {expr('dur', depth + 1)}"
        if kind == "dur":
            return rnd.choice([lambda: f"{expr('ts', depth + 1)} - {expr('ts', depth + 1)}",
                               lambda: f"{expr('dur', depth + 1)} + {expr('dur', depth + 1)}",
                               lambda: f"duration({expr('string', depth + 1)})"])()
        if kind == "ip":
            return rnd.choice([lambda: f"ip({expr('string', depth + 1)})", lambda: f"{expr('cidr', depth + 1)}.ip()"])()
        if kind == "cidr":
            return rnd.choice([lambda: f"cidr({expr('string', depth + 1)})", lambda: f"{expr('cidr', depth + 1)}.masked()"])()
        if kind == "url":
            return f"url({expr('string', depth + 1)})"
        if kind == "list":
            return rnd.choice([lambda: f"{expr('list', depth + 1)}.sortBy(x, {rnd.choice(['x', '-x', 'string(x)', 'dyn(x)'])})",
                               lambda: f"optional.unwrap([?{expr('opt', depth + 1)}].map(o, o))",
                               lambda: f"[?{expr('opt', depth + 1)}, ?{expr('opt', depth + 1)}]"])()
        if kind == "opt":
            return rnd.choice([lambda: f"{expr('opt', depth + 1)}.optMap(v, v)",
                               lambda: f"{expr('opt', depth + 1)}.or({expr('opt', depth + 1)})"])()
        return pick(kind)

    def boolean() -> str:
        return rnd.choice([
            lambda: f"{expr('ts')} {rnd.choice(['<', '==', '>='])} {expr('ts')}",
            lambda: f"{expr('dur')} {rnd.choice(['<', '==', '>'])} {expr('dur')}",
            lambda: f"{expr('cidr')}.containsIP({expr(rnd.choice(['ip', 'string']))})",
            lambda: f"{expr('cidr')}.containsCIDR({expr(rnd.choice(['cidr', 'string']))})",
            lambda: f"{expr('ip')}.{rnd.choice(['isLoopback', 'isGlobalUnicast', 'isUnspecified'])}()",
            lambda: f"{rnd.choice(['isIP', 'isCIDR', 'isURL'])}({expr('string')})",
            lambda: f"{expr('string')} == {expr('string')}",
            lambda: f"{expr('list')}.size() {rnd.choice(['<', '>='])} {rnd.randint(0, 4)}",
            lambda: f"{expr('opt')}.hasValue()",
            lambda: f"format.{rnd.choice(['dns1123Label', 'labelValue', 'uri', 'uuid'])}().validate({expr('string')}).hasValue()",
            lambda: f"{expr('url')} == {expr('url')}",
            lambda: f"{expr('ts')}.{rnd.choice(['getHours', 'getDayOfWeek', 'getFullYear'])}({rnd.choice(['', chr(34) + 'UTC' + chr(34), chr(34) + '+01:00' + chr(34)])}) > 0",
        ])()
    return sorted({boolean() for _ in range(count)})
