"""Messages of the detailed training model and of `vramplan validate`, in French and English."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- case files ---------------------------------------------------------------------------
    "error.case_unknown_column": {
        FR: "fichier de cas : colonne inconnue « {value} » ; colonnes du format : {choices}",
        EN: "case file: unknown column '{value}'; the format's columns: {choices}",
    },
    "error.case_column": {
        FR: "fichier de cas : la colonne obligatoire « {value} » manque ; colonnes obligatoires : "
        "id, model, method, measured, unit",
        EN: "case file: the required column '{value}' is missing; required columns: "
        "id, model, method, measured, unit",
    },
    "error.case_file": {
        FR: "« {value} » ne peut pas être lu ; donnez un fichier CSV en UTF-8 au format des cas",
        EN: "'{value}' cannot be read; give a UTF-8 CSV file in the case format",
    },
    "error.case_file.not_found": {
        FR: "« {value} » n'existe pas ; donnez un fichier CSV au format des cas",
        EN: "'{value}' does not exist; give a CSV file in the case format",
    },
    "error.case_file.not_regular": {
        FR: "« {value} » n'est pas un fichier ordinaire (un tube, un périphérique ou une "
        "socket) ; donnez un fichier CSV au format des cas",
        EN: "'{value}' is not a regular file (a pipe, a device or a socket); give a CSV file in "
        "the case format",
    },
    "error.case_file.unreadable": {
        FR: "« {value} » ne peut pas être lu ({cause}) ; donnez un fichier CSV au format des cas",
        EN: "'{value}' cannot be read ({cause}); give a CSV file in the case format",
    },
    "error.case_file.too_large": {
        FR: "« {value} » dépasse {limit} ; découpez-le en plusieurs fichiers de cas",
        EN: "'{value}' is larger than {limit}; split it into several case files",
    },
    "error.case_file.not_utf8": {
        FR: "« {value} » n'est pas en UTF-8 ; enregistrez-le en UTF-8",
        EN: "'{value}' is not UTF-8; save it as UTF-8",
    },
    "error.case_file.not_csv": {
        FR: "fichier de cas, {value} : CSV illisible ({cause})",
        EN: "case file, {value}: unreadable CSV ({cause})",
    },
    "error.case_value": {
        FR: "ligne {row} ({case_id}) : {detail}",
        EN: "row {row} ({case_id}): {detail}",
    },
    "accepted.measured": {
        FR: "indiquez le pic mesuré, un nombre positif, ou OOM si le run n'a pas tenu",
        EN: "give the measured peak, a positive number, or OOM for a run that did not fit",
    },
    "accepted.unit": {FR: "GB, GiB ou MiB", EN: "GB, GiB or MiB"},
    "accepted.gpus": {FR: "un nombre entier de GPU, au moins 1",
                      EN: "a whole number of GPUs, 1 or more"},
    "accepted.new_tokens": {
        FR: "un nombre entier de jetons générés, au moins 1",
        EN: "a whole number of generated tokens, 1 or more",
    },
    "accepted.id": {FR: "un identifiant unique pour la ligne", EN: "a unique id for the row"},
    "accepted.column": {
        FR: "les colonnes du format des cas (voir docs/cases-format.md)",
        EN: "the columns of the case format (see docs/cases-format.md)",
    },
    "accepted.lora_dropout": {FR: "un taux entre 0 et 1 (exclu)",
                              EN: "a rate from 0 to 1 (excluded)"},
    # --- parts of the detailed estimate -------------------------------------------------------
    "part.trainable_weights": {FR: "poids entraînés", EN: "trained weights"},
    "part.frozen_weights": {FR: "poids gelés (stockage réel)", EN: "frozen weights (as stored)"},
    "part.gradients": {FR: "gradients", EN: "gradients"},
    "part.master_weights": {FR: "copie maîtresse fp32", EN: "fp32 master copy"},
    "part.optimizer_states": {FR: "états de l'optimiseur", EN: "optimizer states"},
    "part.activations": {FR: "activations gardées pour la rétropropagation",
                         EN: "activations saved for backward"},
    "part.autocast_copies": {FR: "copies 16 bits des poids (autocast)",
                             EN: "16-bit weight copies (autocast)"},
    "part.weight_copies": {FR: "copies des poids gardées pour la rétropropagation",
                           EN: "weight copies saved for backward"},
    "part.logits_loss": {FR: "logits et perte", EN: "logits and loss"},
    "part.previous_graph": {FR: "graphe du micro-lot précédent",
                            EN: "previous micro-batch's graph"},
    "part.backward_temporaries": {FR: "temporaires de la rétropropagation",
                                  EN: "backward temporaries"},
    "part.step_temporaries": {FR: "temporaires du pas d'optimisation",
                              EN: "optimizer step temporaries"},
    "part.reference_weights": {FR: "poids du modèle de référence",
                               EN: "reference model's weights"},
    "part.reward_weights": {FR: "poids du modèle de récompense", EN: "reward model's weights"},
    "part.value_model": {FR: "modèle de valeur (poids, gradients, optimiseur)",
                         EN: "value model (weights, gradients, optimizer)"},
    "part.value_activations": {FR: "activations du modèle de valeur",
                               EN: "value model's activations"},
    "part.reference_forward": {FR: "passe avant sans gradient (log-probabilités)",
                               EN: "forward without gradient (log-probabilities)"},
    "part.chosen_nll": {FR: "entropie croisée des réponses choisies",
                        EN: "cross-entropy of the chosen answers"},
    "part.generation_engine": {FR: "moteur vLLM colocalisé (sa part du GPU)",
                               EN: "colocated vLLM engine (its share of the GPU)"},
    "part.generation_scores": {FR: "scores des jetons générés (fp32)",
                               EN: "scores of the generated tokens (fp32)"},
    "training_phase.generation": {FR: "génération", EN: "generation"},
    "training_phase.log_probs": {FR: "log-probabilités sans gradient",
                                 EN: "log-probabilities without gradient"},
    "training_phase.reference_pass": {FR: "passe du modèle de référence",
                                      EN: "reference model's pass"},
    "training_phase.loss_forward": {FR: "fin de la passe avant (perte)",
                                    EN: "end of forward (loss)"},
    "training_phase.backward_start": {FR: "début de la rétropropagation",
                                      EN: "start of backward"},
    "training_phase.backward_blocks": {FR: "rétropropagation dans les blocs",
                                       EN: "backward through the blocks"},
    "training_phase.optimizer_step": {FR: "pas de l'optimiseur", EN: "optimizer step"},
    "training_phase.backward_end": {FR: "rétropropagation du premier bloc",
                                    EN: "backward through the first block"},
    "training_phase.embedding_backward": {FR: "rétropropagation des embeddings de jetons",
                                          EN: "backward through the token embeddings"},
    "training_phase.first_micro_batch": {
        FR: "premier micro-lot (entrées des blocs gardées sur le GPU)",
        EN: "first micro-batch (block inputs kept on the GPU)"},
    "training_phase.later_micro_batch": {FR: "micro-lot suivant (gradients accumulés)",
                                         EN: "later micro-batch (accumulated gradients)"},
    # --- vramplan validate --------------------------------------------------------------------
    "help.validate": {
        FR: "comparer les estimations à des pics mesurés (fichier CSV au format des cas)",
        EN: "score the estimates against measured peaks (a CSV file in the case format)",
    },
    "help.validate_file": {
        FR: "le fichier CSV des cas (sans fichier : les deux fichiers livrés avec vramplan)",
        EN: "the CSV file of cases (none: the two files shipped with vramplan)",
    },
    "validate.title": {FR: "Validation : {n} lignes de {file}",
                       EN: "Validation: {n} rows from {file}"},
    "validate.col_id": {FR: "cas", EN: "case"},
    "validate.col_model": {FR: "modèle", EN: "model"},
    "validate.col_kind": {FR: "modèle de calcul", EN: "estimated by"},
    "validate.col_estimate": {FR: "estimation", EN: "estimate"},
    "validate.col_measured": {FR: "mesure", EN: "measured"},
    "validate.col_error": {FR: "écart", EN: "error"},
    "validate.oom": {FR: "OOM", EN: "OOM"},
    "validate.oom_right": {FR: "OOM prévu", EN: "OOM predicted"},
    "validate.oom_wrong": {FR: "OOM non prévu", EN: "OOM missed"},
    "validate.skipped": {FR: "non modélisé", EN: "not yet modelled"},
    "validate.summary": {FR: "Résumé", EN: "Summary"},
    "validate.rows_scored": {FR: "lignes mesurées comparées : {n}",
                             EN: "rows scored: {n}"},
    "validate.median": {FR: "écart absolu médian : {value} %",
                        EN: "median absolute error: {value} %"},
    "validate.p90": {FR: "90e centile : {value} %", EN: "90th percentile: {value} %"},
    "validate.max": {FR: "écart maximal : {value} %", EN: "max absolute error: {value} %"},
    "validate.within": {FR: "à ±10 % près : {value} % des lignes",
                        EN: "within ±10 %: {value} % of rows"},
    "validate.oom_summary": {FR: "lignes OOM bien classées : {right} sur {total}",
                             EN: "OOM rows classified right: {right} of {total}"},
    "validate.skipped_summary": {FR: "lignes non modélisées : {n}",
                                 EN: "rows not yet modelled: {n}"},
    "validate.unread_summary": {FR: "lignes illisibles, non comparées : {n}",
                                EN: "rows not read, not scored: {n}"},
    "validate.kind_training": {FR: "entraînement", EN: "training"},
    "validate.kind_per_gpu": {FR: "multi-GPU", EN: "multi-GPU"},
    "validate.kind_inference": {FR: "inférence", EN: "inference"},
    # --- vramplan estimate: activations from batch and sequence -------------------------------
    "report.activations_from": {
        FR: "A estimé pour {model}, micro-lot {batch} × {seq_len} jetons (entraînement complet, "
        "précision mixte, SDPA) : activations, logits et perte au pic",
        EN: "A estimated for {model}, micro-batch {batch} x {seq_len} tokens (full fine-tuning, "
        "mixed precision, SDPA): activations, logits and loss at the peak",
    },
}
