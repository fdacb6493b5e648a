# The outermost frames of an object from `readelf --debug-dump=frames`:
# prints "LO HI" (hex) for each FDE whose return-address column is
# undefined, by its own instructions or its CIE's.
/ CIE$/ { cur = "cie"; cie = $1; next }
/ FDE cie=/ {
	cur = "fde"; c = substr($5, 5); split(substr($6, 4), r, "\\.\\.")
	done = 0
	if (und[c]) { print r[1], r[2]; done = 1 }
	next
}
/Return address column:/ { ra[cie] = $4 }
/DW_CFA_undefined: r[0-9]+/ {
	reg = $2; sub(/^r/, "", reg)
	if (cur == "cie" && reg == ra[cie]) und[cie] = 1
	else if (cur == "fde" && reg == ra[c] && !done) { print r[1], r[2]; done = 1 }
}
