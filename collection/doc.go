// Package collection is 02 — Records §5.2–§8: how a space describes its
// collections as data, and the rules every peer enforces from that
// description.
//
//   - Definitions (§6.1): [ParseDefinition] reads a definition body into a
//     typed [Definition], or returns an [*Invalid] listing every [Reason]
//     (def/… codes, JSON paths from "$"). An invalid definition is none.
//     [ParseDefinitionVersion] adds the record's own checks: sys.collection,
//     not a delete, key "collection:" + name.
//   - The schema dialect (§6.2): [ParseSchema] is the publishing check;
//     [ReadSchema] reads one as a reader does, ignoring unknown keywords.
//     [Schema.Validate] flags a body with [Issue]s (schema/… codes), never
//     a reason to refuse (§9.6).
//   - Link conformance (§5.2): [LinkIssues], given a [Targets] lookup.
//   - Rules (§7) and retain (§4.5): [OnePerKey] and [Definition.OnePerKey]
//     under a [OneKey] ([PublicOneKey], [PrivateOneKey] from K₀), with a
//     [*NoKeyError] naming a missing part; [CheckKeyForm] (§4.1),
//     [CheckFinal], [CheckRetain], [CheckOnePer], [CheckFixed];
//     [WriterMustRetain] for writers.
//   - Topics and tags (§8): [Topic.Values], [Tag], [Definition.Tags] under a
//     [TagKey] ([PublicTagKey], [PrivateTagKey]), [SameTags], [CheckTags].
//   - [Check.Run] makes the checks in the reference order of §9.4 step 4.
//
// Which definition is in force is the access history's replay (§6.3), not
// this package's: callers pass an [InForce] — a definition, none (the zero
// value), or one they can't read.
//
// # Refusals and codes
//
// A check that refuses returns a [*record.Refusal] whose code is one of
// key/onePer, rule/final, rule/retain, rule/onePer, rule/fixed and
// tags/mismatch. [Codes] lists every code of this package.
//
// # Bounds
//
// Definitions come from other members. Reading one takes time and memory
// linear in its size; schemas nest at most [MaxSchemaDepth] deep and an
// enum or oneOf lists at most [MaxEnum] values (beyond them: def/bound);
// reasons and issues are capped at [MaxReasons] and [MaxIssues], and one
// validation at [MaxValidateSteps] steps. The JSON
// reader (canonical.Parse) already refuses nesting deeper than
// canonical.MaxDepth. No input panics.
//
// # Guarantees
//
// Every value returned is immutable and safe for concurrent use; callers
// must not change the fields of a [Definition] or [Schema]. Functions keep
// no state between calls.
package collection
