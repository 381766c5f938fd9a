package dashboard

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/sikahq/sika"
)

// formState is a form as the merchant filled it, and what the API answered about it: the
// field errors and the business error, in the page's language, shown beside the form. The
// rule that refused it is the API's; the dashboard only says it.
type formState struct {
	Values map[string]string
	Fields map[string]string
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
	return &formState{Values: values, Fields: map[string]string{}, Status: http.StatusOK}
}

// Val is a field's value as submitted (or its default).
func (f *formState) Val(name string) string { return f.Values[name] }

// Err is a field's error message ("" when none).
func (f *formState) Err(name string) string { return f.Fields[name] }

// Failed reports whether the API refused the form.
func (f *formState) Failed() bool { return f.Alert != "" || len(f.Fields) > 0 }

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
				f.Fields[field] = fieldMessage(lang, msgs)
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
// dashboard's keys; any other message is shown as the API wrote it, under a general one.
var fieldMessages = map[string]string{
	sika.MsgRequired:          "err_required",
	sika.MsgNotBlank:          "err_required",
	sika.MsgInvalidUUID:       "err_choice",
	sika.MsgInvalidEmail:      "err_email",
	sika.MsgAmountNotPositive: "err_positive",
	sika.MsgMinOne:            "err_min_one",
	sika.MsgPositiveInt:       "err_min_one",
	sika.MsgInteger:           "err_min_one",
}

func fieldMessage(lang string, msgs []string) string {
	if len(msgs) == 0 {
		return translate(lang, "err_invalid")
	}
	if key, ok := fieldMessages[msgs[0]]; ok {
		return translate(lang, key)
	}
	return translate(lang, "err_invalid") + " (" + msgs[0] + ")"
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
var formTranslations = map[string]map[string]string{
	"fr": {
		"apierr_validation":             "Corrigez les champs signalés.",
		"apierr_other":                  "L'opération a été refusée.",
		"apierr_rate_limited":           "Trop de demandes. Réessayez dans une minute.",
		"apierr_merchant_inactive":      "Le mode LIVE n'est pas encore ouvert : votre dossier KYC doit être approuvé.",
		"apierr_merchant_suspended":     "Ce compte marchand est suspendu : contactez le support Sika.",
		"apierr_file_too_large":         "Le fichier dépasse 10 Mo.",
		"apierr_unsupported_media_type": "Le fichier n'est ni une image JPEG, PNG ou WebP, ni un PDF.",
		"apierr_request_too_large":      "La demande est trop volumineuse.",
		"err_required":                  "Ce champ est obligatoire.",
		"err_choice":                    "Choix invalide.",
		"err_invalid":                   "Valeur invalide",
		"err_email":                     "Saisissez une adresse e-mail valide.",
		"err_positive":                  "Saisissez un montant supérieur à 0.",
		"err_min_one":                   "Saisissez un nombre entier, 1 au moins.",
	},
	"en": {
		"apierr_validation":             "Correct the fields shown.",
		"apierr_other":                  "The operation was refused.",
		"apierr_rate_limited":           "Too many requests. Try again in a minute.",
		"apierr_merchant_inactive":      "LIVE is not open yet: your KYC dossier must be approved.",
		"apierr_merchant_suspended":     "This merchant account is suspended: contact Sika support.",
		"apierr_file_too_large":         "The file is larger than 10 MB.",
		"apierr_unsupported_media_type": "The file is not a JPEG, PNG or WebP image, nor a PDF.",
		"apierr_request_too_large":      "The request is too large.",
		"err_required":                  "This field is required.",
		"err_choice":                    "Invalid choice.",
		"err_invalid":                   "Invalid value",
		"err_email":                     "Enter a valid email address.",
		"err_positive":                  "Enter an amount greater than 0.",
		"err_min_one":                   "Enter a whole number, at least 1.",
	},
}
