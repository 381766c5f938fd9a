package dashboard

import (
	"errors"
	"html/template"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web"
	"github.com/sikahq/sika/web/webapp"
)

// formState is a form as the merchant filled it, and what the API answered about it: the
// field errors and the business error, in the page's language, shown beside the form. The
// rule that refused it is the API's; the dashboard only says it.
type formState struct {
	Values map[string]string
	Fields map[string]string
	// apiWords are the API's own words of a field message that has no translation.
	apiWords map[string]string
	// Alert is the business error (a code of the contract), Detail the API's own message.
	Alert, Detail, Code string
	// Status is the HTTP status the page is answered with.
	Status int
	// IdempotencyKey is made when a form that moves money is shown (newIdempotencyKey): the
	// submit carries it, so a double submit is one operation.
	IdempotencyKey string
}

func newForm(values map[string]string) *formState {
	if values == nil {
		values = map[string]string{}
	}
	return &formState{Values: values, Fields: map[string]string{}, apiWords: map[string]string{}, Status: http.StatusOK}
}

// Val is a field's value as submitted (or its default).
func (f *formState) Val(name string) string { return f.Values[name] }

// Err is a field's error message ("" when none). A message of the API that the dashboard does
// not translate follows it in the API's words, marked as English (lang="en").
func (f *formState) Err(name string) template.HTML {
	msg := template.HTML(template.HTMLEscapeString(f.Fields[name]))
	if api := f.apiWords[name]; api != "" {
		msg += template.HTML(` <span lang="en">(` + template.HTMLEscapeString(api) + `)</span>`)
	}
	return msg
}

// Failed reports whether the API refused the form.
func (f *formState) Failed() bool { return f.Alert != "" || len(f.Fields) > 0 }

// again shows a refused form again: the API's refusal recorded for the page (refusal), then
// the page drawn by page, with f.Status. An error that is not the API's answer about the form
// is returned for the error page.
func (f *formState) again(lang string, err error, page func() error) error {
	if err := f.refusal(lang, err); err != nil {
		return err
	}
	return page()
}

// refusal records the API's refusal of a form for the page to show. An error that is not the
// API's answer about the form (a bug, the store down, another merchant's id: not found) is
// returned for the error page.
func (f *formState) refusal(lang string, err error) error {
	var e *sika.Error
	if !errors.As(err, &e) || e.Code == sika.CodeNotFound || e.Code == sika.CodeInternal || e.Code == sika.CodeServiceUnavailable {
		return err
	}
	if e.Code == sika.CodeValidation {
		f.Status = http.StatusBadRequest
		// Each field the form has gets its message beside it; a field it does not have (the
		// API names it) is said above the form.
		var other []string
		for field, msgs := range e.Fields {
			if _, ok := f.Values[field]; ok {
				f.Fields[field], f.apiWords[field] = fieldMessage(lang, msgs)
			} else {
				other = append(other, field+": "+strings.Join(msgs, " "))
			}
		}
		sort.Strings(other)
		f.Alert, f.Detail, f.Code = translate(lang, "apierr_validation"), strings.Join(other, " "), string(e.Code)
		return nil
	}
	f.Status = http.StatusUnprocessableEntity
	switch e.Code {
	case sika.CodeFileTooLarge:
		f.Status = http.StatusRequestEntityTooLarge
	case sika.CodeUnsupportedMediaType:
		f.Status = http.StatusUnsupportedMediaType
	case sika.CodeRateLimited:
		f.Status = http.StatusTooManyRequests
	case sika.CodeMerchantInactive, sika.CodeMerchantSuspended:
		f.Status = http.StatusForbidden
	}
	key := "apierr_" + string(e.Code)
	if _, ok := translations[lang][key]; !ok {
		key = "apierr_other"
	}
	f.Alert, f.Detail, f.Code = translate(lang, key), e.Message, string(e.Code)
	return nil
}

// fieldMessages maps the API's field messages (the contract's wording, English) to the
// dashboard's keys; fieldPatterns those with a number or a list in them (the number is the
// text's %s).
var fieldMessages = map[string]string{
	sika.MsgRequired:          "err_required",
	sika.MsgNotBlank:          "err_required",
	sika.MsgInvalidUUID:       "err_choice",
	sika.MsgInvalidEmail:      "err_email",
	sika.MsgAmountNotPositive: "err_positive",
	sika.MsgMinOne:            "err_min_one",
	sika.MsgPositiveInt:       "err_min_one",
	sika.MsgInteger:           "err_min_one",
	"Enter a valid URL.":      "err_url",
	"Enter a valid IPv4 or IPv6 address or CIDR range.": "err_ip",
	"Must be TEST or LIVE.":                             "err_choice",
}

var fieldPatterns = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`^Ensure this field has no more than (\d+) characters\.$`), "err_max_chars"},
	{regexp.MustCompile(`^Must be between 1 and (\d+) characters\.$`), "err_max_chars"},
	{regexp.MustCompile(`^Select a valid choice`), "err_choice"},
	{regexp.MustCompile(`^Enter a valid date-time`), "err_datetime"},
	{regexp.MustCompile(`^Enter a valid phone number for (.+)\.$`), "err_phone"},
}

// fieldMessage is a field's message in lang, and the API's own words when none of the
// dashboard's says it (shown after the general message, marked as English).
func fieldMessage(lang string, msgs []string) (text, api string) {
	if len(msgs) == 0 {
		return translate(lang, "err_invalid") + ".", ""
	}
	if key, ok := fieldMessages[msgs[0]]; ok {
		return translate(lang, key), ""
	}
	for _, p := range fieldPatterns {
		if m := p.re.FindStringSubmatch(msgs[0]); m != nil {
			text := translate(lang, p.key)
			if len(m) > 1 {
				text = strings.ReplaceAll(text, "%s", web.CountryNamed(lang, m[1]))
			}
			return text, ""
		}
	}
	if lang == "en" {
		return msgs[0], ""
	}
	return translate(lang, "err_invalid") + ".", msgs[0]
}

// formValues reads the named fields of a posted form as they were typed: the API validates.
func formValues(r *http.Request, names ...string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = r.PostFormValue(n)
	}
	return out
}

// formTranslations are the messages of a refused form.
var formTranslations = webapp.Catalogue{
	"fr": {
		"apierr_validation":              "Corrigez les champs signalés.",
		"apierr_other":                   "L'opération a été refusée.",
		"apierr_rate_limited":            "Trop de demandes. Réessayez dans une minute.",
		"apierr_merchant_inactive":       "Le mode LIVE n'est pas encore ouvert : votre dossier KYC doit être approuvé.",
		"apierr_merchant_suspended":      "Ce compte marchand est suspendu : contactez le support Sika.",
		"apierr_file_too_large":          "Le fichier dépasse 10 Mo.",
		"apierr_unsupported_media_type":  "Le fichier n'est ni une image JPEG, PNG ou WebP, ni un PDF.",
		"apierr_request_too_large":       "La demande est trop volumineuse.",
		"apierr_self_approval_forbidden": "Vous l'avez demandé : un autre membre doit l'approuver ou le refuser.",
		"apierr_not_awaiting_approval":   "Il n'attend plus d'approbation (déjà décidé, ou le délai est passé).",
		"apierr_role_forbidden":          "Votre rôle dans l'équipe ne permet pas cette opération.",
		"err_required":                   "Ce champ est obligatoire.",
		"err_choice":                     "Choix invalide.",
		"err_invalid":                    "Valeur invalide",
		"err_url":                        "Saisissez une adresse web valide (https://…).",
		"err_ip":                         "Saisissez une adresse IPv4 ou IPv6, ou une plage CIDR.",
		"err_max_chars":                  "%s caractères au plus.",
		"err_datetime":                   "Saisissez une date et une heure valides.",
		"err_phone":                      "Saisissez un numéro de téléphone valide (%s).",
		"err_email":                      "Saisissez une adresse e-mail valide.",
		"err_positive":                   "Saisissez un montant supérieur à 0.",
		"err_min_one":                    "Saisissez un nombre entier, 1 au moins.",
	},
	"en": {
		"apierr_validation":              "Correct the fields shown.",
		"apierr_other":                   "The operation was refused.",
		"apierr_rate_limited":            "Too many requests. Try again in a minute.",
		"apierr_merchant_inactive":       "LIVE is not open yet: your KYC dossier must be approved.",
		"apierr_merchant_suspended":      "This merchant account is suspended: contact Sika support.",
		"apierr_file_too_large":          "The file is larger than 10 MB.",
		"apierr_unsupported_media_type":  "The file is not a JPEG, PNG or WebP image, nor a PDF.",
		"apierr_request_too_large":       "The request is too large.",
		"apierr_self_approval_forbidden": "You requested it: another member must approve or reject it.",
		"apierr_not_awaiting_approval":   "It no longer waits for approval (already decided, or its time ran out).",
		"apierr_role_forbidden":          "Your role in the team does not allow this.",
		"err_required":                   "This field is required.",
		"err_choice":                     "Invalid choice.",
		"err_invalid":                    "Invalid value",
		"err_url":                        "Enter a valid web address (https://…).",
		"err_ip":                         "Enter an IPv4 or IPv6 address, or a CIDR range.",
		"err_max_chars":                  "At most %s characters.",
		"err_datetime":                   "Enter a valid date and time.",
		"err_phone":                      "Enter a valid phone number (%s).",
		"err_email":                      "Enter a valid email address.",
		"err_positive":                   "Enter an amount greater than 0.",
		"err_min_one":                    "Enter a whole number, at least 1.",
	},
}
