// ebsoracle answers what k8s.io/csi-translation-lib's KubernetesVolumeIDToEBSVolumeID (v0.36.1, the version
// upstream's scheduler links) makes of in-tree AWS EBS volume ids: the CSI volume handle, or the error text.
// It reads one JSON string per line on stdin and writes one JSON answer per line: {"handle": text} (the
// handle's bytes, hex-encoded where they are not valid UTF-8, as {"handleHex": ...}) or {"error": text}.
// schedcheck's tests keep its answers in tests/data/ebs_volume_id_table.json (regenerate with
// tests/data/regen_ebs_volume_id_table.py). A tool for the tests, not part of the adapter.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"unicode/utf8"

	"k8s.io/csi-translation-lib/plugins"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var id string
		if err := json.Unmarshal(in.Bytes(), &id); err != nil {
			_ = out.Encode(map[string]string{"error": "oracle: " + err.Error()})
			continue
		}
		handle, err := plugins.KubernetesVolumeIDToEBSVolumeID(id)
		switch {
		case err != nil:
			_ = out.Encode(map[string]string{"error": err.Error()})
		case utf8.ValidString(handle):
			_ = out.Encode(map[string]string{"handle": handle})
		default:
			_ = out.Encode(map[string]string{"handleHex": hex.EncodeToString([]byte(handle))})
		}
	}
}
