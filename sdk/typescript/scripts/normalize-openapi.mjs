// Reads the OpenAPI document on stdin and writes it on stdout with two of its allOf idioms spelled
// out, so that openapi-typescript types them; the document's meaning does not change.
//
// The document extends a base schema inline: `allOf: [{$ref: Success}, {properties: {data: X}}]`
// and `allOf: [{$ref: Page}, {properties: {results: {items: Y}}}]`. JSON Schema applies both
// parts, so `data` is required (Success requires it) and `results` is an array of Y (Page says
// it is an array); but openapi-typescript types each part alone, making `data` optional and
// `results` unknown. Here, for each such inline part, a property that its $ref'd sibling requires
// is added to the part's `required`, and a property without a `type` takes its sibling's. A part
// that only requires properties its sibling declares (`allOf: [{$ref: APIKey}, {required: [key]}]`)
// gets those declarations, so that they are typed as required.
import { readFileSync } from "node:fs";

const doc = JSON.parse(readFileSync(0, "utf8"));

function resolve(ref) {
	if (typeof ref !== "string" || !ref.startsWith("#/")) return undefined;
	let node = doc;
	for (const part of ref.slice(2).split("/")) node = node?.[part.replaceAll("~1", "/").replaceAll("~0", "~")];
	return node;
}

function visit(node) {
	if (Array.isArray(node)) return node.forEach(visit);
	if (node === null || typeof node !== "object") return;
	if (Array.isArray(node.allOf)) {
		const bases = node.allOf.map((s) => resolve(s?.$ref)).filter((s) => s && typeof s === "object");
		for (const part of node.allOf) {
			if (!part || typeof part !== "object" || part.$ref) continue;
			if (part.properties === undefined && Array.isArray(part.required)) {
				for (const name of part.required) {
					const declared = bases.find((b) => b.properties?.[name])?.properties[name];
					if (declared) part.properties = { ...part.properties, [name]: structuredClone(declared) };
				}
			}
			if (typeof part.properties !== "object") continue;
			for (const [name, schema] of Object.entries(part.properties)) {
				for (const base of bases) {
					const declared = base.properties?.[name];
					if (declared?.type !== undefined && schema && typeof schema === "object" && schema.type === undefined && schema.$ref === undefined) {
						schema.type = declared.type;
					}
					if (base.required?.includes(name) && !(part.required ?? []).includes(name)) {
						part.required = [...(part.required ?? []), name];
					}
				}
			}
		}
	}
	Object.values(node).forEach(visit);
}

visit(doc);
process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
