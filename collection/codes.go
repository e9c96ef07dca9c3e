package collection

// Reason codes. They are a stable contract: tools print them, and tests,
// peers and people match on them.
//
// A definition that fails a check of 02 §6 is invalid, and counts as none
// (§6.1); each [Reason] it is refused for carries one of the def/… codes.
const (
	CodeDefObject      = "def/object"      // the body is not a JSON object (§6.1)
	CodeDefName        = "def/name"        // name missing, not the pattern of §6.1, or sys.* (§6.4)
	CodeDefTitle       = "def/title"       // title present and not a string (§6.1)
	CodeDefDescription = "def/description" // description present and not a string (§6.1)
	CodeDefSchema      = "def/schema"      // schema missing or outside the publishing subset (§6.2)
	CodeDefVersion     = "def/version"     // version missing or not a whole number from 1 (§6.1, §6.3)
	CodeDefHistory     = "def/history"     // history present and neither "latest" nor "all" (§6.1)
	CodeDefLinks       = "def/links"       // links declarations malformed (§5.2)
	CodeDefRules       = "def/rules"       // rules malformed or naming anything but onePer, fixed, final (§7.5)
	CodeDefTopics      = "def/topics"      // topics malformed (§8.1)
	CodeDefBound       = "def/bound"       // beyond a bound of this implementation (MaxSchemaDepth, MaxEnum)
	CodeDefKey         = "def/key"         // the definition record's key is not "collection:" + name (§6.1)
	CodeDefDeleted     = "def/deleted"     // the definition record's version is a delete (§6.1)
	CodeDefCollection  = "def/collection"  // the version is not in sys.collection (§6.1)
	CodeDefMore        = "def/more"        // more reasons than MaxReasons; the rest are not listed
)

// Refusal codes: a version a peer must refuse for the rules of its
// collection's definition in force carries one of these in a
// [record.Refusal].
const (
	CodeKeyOnePer   = "key/onePer"    // 02 §4.1: a first version at a onePer key's form the rules in force do not give
	CodeRuleFinal   = "rule/final"    // 02 §7.4: seq > 0 under final
	CodeRuleRetain  = "rule/retain"   // 02 §4.5: no retain on a seq 0 under onePer or fixed, or in an access collection
	CodeRuleOnePer  = "rule/onePer"   // 02 §7.3: a first version not at its derived key, or with no key
	CodeRuleFixed   = "rule/fixed"    // 02 §7.4: a fixed field differs from the first version's
	CodeTagMismatch = "tags/mismatch" // 02 §8.4: tags are not the recomputed set, or any tag with no topics in force
)

// Issue codes: what a reader flags and never refuses for (02 §9.6).
const (
	CodeSchemaType       = "schema/type"                 // type
	CodeSchemaRequired   = "schema/required"             // required
	CodeSchemaAdditional = "schema/additionalProperties" // additionalProperties: false
	CodeSchemaEnum       = "schema/enum"                 // enum
	CodeSchemaConst      = "schema/const"                // const
	CodeSchemaOneOf      = "schema/oneOf"                // oneOf: not exactly one labelled choice
	CodeSchemaMinimum    = "schema/minimum"              // minimum
	CodeSchemaMaximum    = "schema/maximum"              // maximum
	CodeSchemaMinLength  = "schema/minLength"            // minLength
	CodeSchemaMaxLength  = "schema/maxLength"            // maxLength
	CodeSchemaMinItems   = "schema/minItems"             // minItems
	CodeSchemaMaxItems   = "schema/maxItems"             // maxItems
	CodeSchemaMore       = "schema/more"                 // more issues than MaxIssues; the rest are not listed

	CodeLinkUndeclared  = "link/undeclared"  // 02 §5.2: a rel the definition does not declare
	CodeLinkCardinality = "link/cardinality" // 02 §5.2: a role declared "one" appears more than once
	CodeLinkTarget      = "link/target"      // 02 §5.2: a held, current target outside the declared collections
	CodeLinkMore        = "link/more"        // more issues than MaxIssues
)

// Codes lists every code this package produces, for documentation and for
// tools that check a code is known.
func Codes() []string {
	return []string{
		CodeDefObject, CodeDefName, CodeDefTitle, CodeDefDescription, CodeDefSchema, CodeDefVersion,
		CodeDefHistory, CodeDefLinks, CodeDefRules, CodeDefTopics, CodeDefBound, CodeDefKey,
		CodeDefDeleted, CodeDefCollection, CodeDefMore,
		CodeKeyOnePer, CodeRuleFinal, CodeRuleRetain, CodeRuleOnePer, CodeRuleFixed, CodeTagMismatch,
		CodeSchemaType, CodeSchemaRequired, CodeSchemaAdditional, CodeSchemaEnum, CodeSchemaConst,
		CodeSchemaOneOf, CodeSchemaMinimum, CodeSchemaMaximum, CodeSchemaMinLength, CodeSchemaMaxLength,
		CodeSchemaMinItems, CodeSchemaMaxItems, CodeSchemaMore,
		CodeLinkUndeclared, CodeLinkCardinality, CodeLinkTarget, CodeLinkMore,
	}
}
