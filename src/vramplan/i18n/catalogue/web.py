"""Messages of the web page, the JSON API and `vramplan serve`, in French and English.

The seed calculator is a French page; its sections (Données, Résultats, Détails, FAQ, Mentions
légales) keep their French titles, and the English version says the same things.
"""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- page head and navigation -------------------------------------------------------------
    "web.title": {
        FR: "Calculateur de VRAM pour l'entraînement de LLM",
        EN: "VRAM calculator for LLM training",
    },
    "web.description": {
        FR: "Combien de mémoire GPU (VRAM) faut-il pour entraîner un LLM ? Paramètres, mémoire "
        "par paramètre et activations : le total, son détail et le verdict pour vos GPU.",
        EN: "How much GPU memory (VRAM) does it take to train an LLM? Parameters, memory per "
        "parameter and activations: the total, its breakdown and the verdict for your GPUs.",
    },
    "web.intro_more": {
        FR: "Choisissez aussi un modèle réel (nombre exact de paramètres, activations estimées à "
        "partir du lot et de la séquence) et vos GPU : le verdict, en tête des résultats, dit si "
        "l'entraînement tient et, plus bas, quoi changer sinon.",
        EN: "You can also pick a real model (exact parameter count, activations estimated from "
        "the batch and the sequence) and your GPUs: the verdict, at the top of the results, says "
        "whether the training fits and, further down, what to change if not.",
    },
    "web.lang_switch": {FR: "Language: English", EN: "Langue : français"},
    "web.lang_switch_label": {FR: "Read this page in English", EN: "Lire cette page en français"},
    "web.skip": {FR: "Aller aux résultats", EN: "Skip to the results"},
    "web.api_link": {FR: "API JSON", EN: "JSON API"},
    "web.footer": {
        FR: "vramplan {version} — logiciel libre ; aucune requête externe, aucun cookie, "
        "aucune mesure d'audience.",
        EN: "vramplan {version} — free software; no external requests, no cookies, no analytics.",
    },
    # --- Données (inputs) ---------------------------------------------------------------------
    "web.inputs": {FR: "Données", EN: "Inputs"},
    "web.group_model": {FR: "Modèle", EN: "Model"},
    "web.model": {FR: "Modèle pré-défini", EN: "Preset model"},
    "web.model_unit": {FR: "facultatif", EN: "optional"},
    "web.model_hint": {
        FR: "Cherchez parmi {count} modèles (nom ou dépôt Hugging Face) : son nombre exact de "
        "paramètres remplit « Paramètres ». Videz ce champ pour saisir un nombre.",
        EN: "Search {count} models (name or Hugging Face repo): its exact parameter count fills "
        "\"Parameters\". Clear this field to type a number.",
    },
    "web.model_line": {
        FR: "Modèle : {name} ({repo}), {count} paramètres exactement.",
        EN: "Model: {name} ({repo}), exactly {count} parameters.",
    },
    "web.model_unknown_close": {
        FR: "{field} : « {value} » est inconnu ; noms proches : {names} ; sinon, {hint}",
        EN: "{field}: unknown name '{value}'; close names: {names}; otherwise, {hint}",
    },
    "web.model_unknown": {
        FR: "{field} : « {value} » est inconnu ; {hint}",
        EN: "{field}: unknown name '{value}'; {hint}",
    },
    "web.model_paste_config": {
        FR: "collez son config.json dans « Ou votre config.json », sous le formulaire.",
        EN: "paste its config.json in \"Or your config.json\", below the form.",
    },
    "web.model_pick_list": {
        FR: "choisissez un nom dans la liste du champ, ou donnez un identifiant Hugging Face "
        "(org/nom).",
        EN: "pick a name from the field's list, or give a Hugging Face repo id (org/name).",
    },
    "web.config_title": {
        FR: "Ou votre config.json (Hugging Face)", EN: "Or your config.json (Hugging Face)"
    },
    "web.config_label": {FR: "Contenu de config.json", EN: "Contents of config.json"},
    "web.config_file": {FR: "Fichier config.json", EN: "config.json file"},
    "web.config_hint": {
        FR: "Collez le fichier (ou choisissez-le) : le serveur compte ses paramètres exactement et "
        "remplit « Paramètres ». Rien n'est conservé.",
        EN: "Paste the file (or pick it): the server counts its parameters exactly and fills "
        "\"Parameters\". Nothing is stored.",
    },
    "web.config_submit": {FR: "Compter les paramètres", EN: "Count the parameters"},
    "web.config_too_large": {
        FR: "config.json : le texte dépasse {limit} ; collez seulement le fichier config.json",
        EN: "config.json: the text is larger than {limit}; paste only the config.json file",
    },
    "web.params": {FR: "Paramètres", EN: "Parameters"},
    "web.params_unit": {FR: "milliards", EN: "billion"},
    "web.params_hint": {
        FR: "Nombre de paramètres N, en milliards (7 ou 7,5).",
        EN: "Parameter count N, in billions (7 or 7.5).",
    },
    "web.bytes_per_param": {FR: "Mémoire par paramètre", EN: "Memory per parameter"},
    "web.preset.adam-mixed": {
        FR: "Adam en précision mixte (16 octets/param)",
        EN: "Adam in mixed precision (16 bytes/param)",
    },
    "web.preset.adam-8bit": {
        FR: "Adam 8 bits (≈ 12 octets/param)", EN: "8-bit Adam (≈ 12 bytes/param)"
    },
    "web.preset.sgd-momentum": {
        FR: "SGD avec moment (≈ 8 octets/param)", EN: "SGD with momentum (≈ 8 bytes/param)"
    },
    "web.preset.custom": {FR: "Valeur personnalisée", EN: "Custom value"},
    "web.custom_bytes": {
        FR: "Mémoire par paramètre personnalisée", EN: "Custom memory per parameter"
    },
    "web.custom_bytes_unit": {FR: "octets/param", EN: "bytes/param"},
    "web.custom_bytes_hint": {
        FR: "Utilisée avec « Valeur personnalisée » (par exemple 10).",
        EN: "Used with \"Custom value\" (e.g. 10).",
    },
    "web.group_activations": {FR: "Activations", EN: "Activations"},
    "web.activations": {FR: "Mémoire d'activations", EN: "Activation memory"},
    "web.activations_unit": {FR: "Go", EN: "GB"},
    "web.activations_hint": {
        FR: "Mémoire d'activations A, en Go (10⁹ octets), mesurée ou estimée à part.",
        EN: "Activation memory A, in GB (10⁹ bytes), measured or estimated separately.",
    },
    "web.submit": {FR: "Calculer", EN: "Calculate"},
    "web.copy_link": {FR: "Copier le lien de ce résultat", EN: "Copy the link to this result"},
    "web.link_copied": {
        FR: "Lien copié : il rouvre la page avec toutes ces données.",
        EN: "Link copied: it reopens the page with all these inputs.",
    },
    "web.link_copy_failed": {
        FR: "Copie impossible ici : copiez l'adresse de la page, elle contient toutes les données.",
        EN: "Cannot copy here: copy the page's address, it holds all the inputs.",
    },
    "web.live_failed": {
        FR: "Le serveur n'a pas répondu : les résultats ci-dessous correspondent aux données "
        "précédentes. Modifiez une valeur pour réessayer, ou cliquez sur « Calculer ».",
        EN: "The server did not answer: the results below are those of the previous inputs. "
        "Change a value to try again, or click \"Calculate\".",
    },
    # --- Résultats ----------------------------------------------------------------------------
    "web.results": {FR: "Résultats", EN: "Results"},
    "web.empty": {
        FR: "Saisissez une valeur pour afficher les résultats.",
        EN: "Enter a value to see the results.",
    },
    "web.fix_inputs": {
        FR: "Corrigez la valeur signalée dans les données pour afficher les résultats.",
        EN: "Correct the value flagged in the inputs to see the results.",
    },
    "web.model_states": {FR: "États du modèle", EN: "Model states"},
    "web.activations_result": {FR: "Activations", EN: "Activations"},
    "web.total": {FR: "VRAM totale", EN: "Total VRAM"},
    "web.sold_as": {FR: "{size}\u00a0Go", EN: "{size}\u00a0GB"},
    "web.in_gib": {FR: "soit {value}", EN: "that is {value}"},
    "web.breakdown": {FR: "Détail par paramètre", EN: "Breakdown per parameter"},
    "web.col_part": {FR: "Partie", EN: "Part"},
    "web.col_per_param": {FR: "Par paramètre", EN: "Per parameter"},
    "web.col_memory": {FR: "Mémoire", EN: "Memory"},
    "web.custom_breakdown": {
        FR: "Valeur personnalisée : {bytes} par paramètre, sans détail.",
        EN: "Custom value: {bytes} per parameter, with no breakdown.",
    },
    "web.chart_title": {FR: "Répartition de la VRAM", EN: "VRAM breakdown"},
    "web.chart_label": {
        FR: "Barre empilée : {parts} ; total {total}, comparé à {lines}.",
        EN: "Stacked bar: {parts}; total {total}, compared with {lines}.",
    },
    "web.chart_label_bare": {
        FR: "Barre empilée : {parts} ; total {total}.", EN: "Stacked bar: {parts}; total {total}.",
    },
    "web.chart_line": {FR: "{gpu} : {capacity}", EN: "{gpu}: {capacity}"},
    "chart.weights": {FR: "poids", EN: "weights"},
    "chart.gradients": {FR: "gradients", EN: "gradients"},
    "chart.master_weights": {FR: "copie maîtresse", EN: "master copy"},
    "chart.optimizer_states": {FR: "états de l'optimiseur", EN: "optimizer states"},
    "chart.planning_margin": {FR: "marge du chiffre rond", EN: "round-figure margin"},
    "chart.activations": {FR: "activations", EN: "activations"},
    "chart.model_states": {FR: "états du modèle", EN: "model states"},
    "web.verdict": {FR: "Verdict", EN: "Verdict"},
    "web.verdict.seed.fits": {
        FR: "Ça tient sur {gpus} × {gpu} : il reste {headroom_gb} ({headroom_gib}).",
        EN: "It fits on {gpus} × {gpu}: {headroom_gb} ({headroom_gib}) left.",
    },
    "web.verdict.seed.nofit": {
        FR: "Ça ne tient pas sur {gpus} × {gpu} : il manque {missing_gb} ({missing_gib}).",
        EN: "It does not fit on {gpus} × {gpu}: {missing_gb} ({missing_gib}) short.",
    },
    "web.verdict.seed.split": {
        FR: "Ça pourrait tenir sur {gpus} × {gpu} : il en faut au moins {count}, le total "
        "réparti également sans surcoût (borne basse).",
        EN: "It could fit on {gpus} × {gpu}: it takes at least {count}, with the total split "
        "evenly and no overhead (a lower bound).",
    },
    "web.verdict.seed.nosplit": {
        FR: "Ça ne tient pas sur {gpus} × {gpu} : il en faut au moins {count}, même en "
        "répartissant le total également (borne basse).",
        EN: "It does not fit on {gpus} × {gpu}: it takes at least {count}, even with the total "
        "split evenly (a lower bound).",
    },
    "web.verdict.seed.detail": {
        FR: "V = {required_gb} ({required_gib}) ; une carte vendue « {sold} » contient "
        "{capacity_gb} ({capacity_gib}).",
        EN: "V = {required_gb} ({required_gib}); a card sold as \"{sold}\" holds {capacity_gb} "
        "({capacity_gib}).",
    },
    "web.verdict.seed.source": {
        FR: "Règle de base du calculateur : V = M + A, comparée à toute la mémoire de la carte, "
        "sans marge. Avec un modèle pré-défini, le verdict vient du modèle détaillé (activations "
        "du lot, partage entre GPU, marge de sécurité).",
        EN: "The calculator's base rule: V = M + A, against the whole memory of the card, with "
        "no margin. With a preset model, the verdict comes from the detailed model (the batch's "
        "activations, sharding across GPUs, a safety margin).",
    },
    "web.verdict.detailed.fits": {
        FR: "Ça tient sur {gpus} × {gpu} : {required_gib} par GPU au pic, pour {usable_gib} "
        "utilisables ({share} % de {capacity_gib}).",
        EN: "It fits on {gpus} × {gpu}: {required_gib} per GPU at the peak, for {usable_gib} "
        "usable ({share}% of {capacity_gib}).",
    },
    "web.verdict.detailed.tight": {
        FR: "Ça tient de justesse sur {gpus} × {gpu}, au-delà de la marge : {required_gib} par "
        "GPU au pic, pour {usable_gib} utilisables ({share} % de {capacity_gib}) ; risque de "
        "manque de mémoire.",
        EN: "It fits on {gpus} × {gpu} only beyond the margin: {required_gib} per GPU at the "
        "peak, for {usable_gib} usable ({share}% of {capacity_gib}); it may run out of memory.",
    },
    "web.verdict.detailed.nofit": {
        FR: "Ça ne tient pas sur {gpus} × {gpu} : {required_gib} par GPU au pic, pour "
        "{usable_gib} utilisables ({share} % de {capacity_gib}) ; il manque {missing_gib}.",
        EN: "It does not fit on {gpus} × {gpu}: {required_gib} per GPU at the peak, for "
        "{usable_gib} usable ({share}% of {capacity_gib}); {missing_gib} short.",
    },
    "web.verdict.detailed.detail": {
        FR: "Une carte vendue « {sold} » contient {capacity_gib} ({capacity_gb}) ; pic par GPU "
        ": {required_gib} ({required_gb}).",
        EN: "A card sold as \"{sold}\" holds {capacity_gib} ({capacity_gb}); peak per GPU: "
        "{required_gib} ({required_gb}).",
    },
    "web.verdict.detailed.source": {
        FR: "Modèle détaillé : pic de mémoire par GPU d'un pas d'entraînement, avec une marge de "
        "sécurité ; son détail et quoi changer suivent plus bas.",
        EN: "Detailed model: the peak memory per GPU of one training step, with a safety "
        "margin; its breakdown and what to change follow below.",
    },
    "web.fix_verdict": {
        FR: "Corrigez la valeur signalée dans les données pour afficher le verdict.",
        EN: "Correct the value flagged in the inputs to see the verdict.",
    },
    "web.summary.fits": {FR: "Ça tient sur {gpus} × {gpu}", EN: "It fits on {gpus} × {gpu}"},
    "web.summary.tight": {
        FR: "Ça tient de justesse sur {gpus} × {gpu}", EN: "It barely fits on {gpus} × {gpu}",
    },
    "web.summary.nofit": {
        FR: "Ça ne tient pas sur {gpus} × {gpu}", EN: "It does not fit on {gpus} × {gpu}",
    },
    "web.summary.split": {
        FR: "Ça pourrait tenir sur {gpus} × {gpu}", EN: "It could fit on {gpus} × {gpu}",
    },
    "web.summary.nosplit": {
        FR: "Ça ne tient pas sur {gpus} × {gpu}", EN: "It does not fit on {gpus} × {gpu}",
    },
    "web.summary.seed": {FR: "{verdict} — V = {total}", EN: "{verdict} — V = {total}"},
    "web.summary.detailed": {
        FR: "{verdict} — {peak} par GPU au pic", EN: "{verdict} — {peak} per GPU at the peak",
    },
    "web.seed_rule": {
        FR: "Règle de base : M = N⋅B, V = M + A", EN: "Base rule: M = N⋅B, V = M + A",
    },
    "web.seed_rule_aside": {
        FR: "Affinage complet de tous les poids, avec la mémoire d'activations saisie et sans "
        "marge : un repère ; le verdict ci-dessus vient du modèle détaillé.",
        EN: "Full fine-tuning of every weight, with the activation memory as entered and no "
        "margin: a reference point; the verdict above comes from the detailed model.",
    },
    "web.catalogue": {
        FR: "Règle de base sur un GPU de chaque type du catalogue ({count} GPU)",
        EN: "The base rule on one GPU of each type in the catalogue ({count} GPUs)",
    },
    # --- Détails: what the page adds after the seed's words (web_seed.py) ----------------------
    "web.details": {FR: "Détails", EN: "Details"},
    "web.details_states_parts": {
        FR: "Le détail de B pour Adam en précision mixte, partie par partie (ZeRO, Rajbhandari "
        "et al. 2020, section 3.1) ; ici, N milliards de paramètres × B octets = N·B × 10⁹ "
        "octets, soit N·B Go :",
        EN: "B for Adam in mixed precision, part by part (ZeRO, Rajbhandari et al. 2020, section "
        "3.1); here N billion parameters × B bytes = N·B × 10⁹ bytes, that is N·B GB:",
    },
    "web.details_cheaper": {
        FR: "Adam 8 bits stocke ses deux moments sur un octet chacun (Dettmers et al. 2022) : "
        "2 + 2 + 4 + 1 + 1 = 10 octets réels, que la planification arrondit à ≈ 12. SGD avec "
        "moment ne garde qu'un tampon de moment : ≈ 8 octets par paramètre avec des poids et "
        "gradients 16 bits et un moment fp32.",
        EN: "8-bit Adam stores its two moments in one byte each (Dettmers et al. 2022): "
        "2 + 2 + 4 + 1 + 1 = 10 real bytes, which planning rounds to ≈ 12. SGD with momentum "
        "keeps a single momentum buffer: ≈ 8 bytes per parameter with 16-bit weights and "
        "gradients and an fp32 momentum.",
    },
    "web.details_measure": {
        FR: "Pour la mesurer en PyTorch : torch.cuda.max_memory_allocated() après une étape. "
        "Sur cette page, choisir un modèle pré-défini estime A à partir du micro-lot et de la "
        "longueur de séquence (modèle détaillé), une valeur que vous pouvez reprendre ou "
        "remplacer.",
        EN: "To measure it in PyTorch: torch.cuda.max_memory_allocated() after one step. On "
        "this page, picking a preset model estimates A from the micro-batch and the sequence "
        "length (detailed model), a value you can take or replace.",
    },
    "web.details_example_units": {
        FR: "Une carte vendue « {accelerator} » contient {capacity_gib}, soit {capacity_gb} : "
        "les {model_states} des états du modèle la dépassent de {over_gb} ({over_gib}).",
        EN: "A card sold as \"{accelerator}\" holds {capacity_gib}, that is {capacity_gb}: the "
        "{model_states} of model states exceed it by {over_gb} ({over_gib}).",
    },
    "web.details_example_total": {
        FR: "Avec {activations} d'activations :", EN: "With {activations} of activations:",
    },
    "web.details_example_total_verdict": {
        FR: "soit {total_gib}, plus que les {capacity_gib} d'un {gpu} : il en faudrait au moins "
        "{count}, le total réparti également (borne basse).",
        EN: "that is {total_gib}, more than the {capacity_gib} of one {gpu}: it would take at "
        "least {count}, with the total split evenly (a lower bound).",
    },
    "web.details_lora_numbers": {
        FR: "En chiffres, pour le modèle de {params} milliards : les poids gelés en 16 bits "
        "font {frozen_formula} ; même à 16 octets chacun, 1 % des paramètres ne ferait que "
        "{adapters} d'adaptateurs. Pour un modèle réel, choisissez-le et la méthode LoRA ou "
        "QLoRA dans « Données » : le modèle détaillé compte aussi les activations.",
        EN: "In figures, for the {params}-billion model: the frozen 16-bit weights take "
        "{frozen_formula}; even at 16 bytes each, 1% of the parameters would be only {adapters} "
        "of adapters. For a real model, pick it and the LoRA or QLoRA method in \"Inputs\": the "
        "detailed model counts the activations too.",
    },
    "web.sisters_title": {FR: "Calculateurs associés", EN: "Related calculators"},
    "web.sister.inference": {
        FR: "Calculateur de VRAM pour l'inférence LLM", EN: "VRAM calculator for LLM inference",
    },
    "web.sister.lora": {FR: "Calculateur de paramètres LoRA", EN: "LoRA parameter calculator"},
    "web.coming": {FR: "bientôt disponible", EN: "coming soon"},
    # --- FAQ: the seed's three questions (web_seed.py), then the page's ---------------------------
    "web.faq": {FR: "Questions fréquentes (FAQ)", EN: "Frequently asked questions (FAQ)"},
    "web.faq_fix_q": {
        FR: "Mon modèle ne tient pas sur mon GPU : que faire ?",
        EN: "My model does not fit on my GPU: what can I do?",
    },
    "web.faq_fix_a": {
        FR: "Par ordre d'effort : réduire la taille de lot et recalculer les activations, passer "
        "à un optimiseur 8 bits, entraîner des adaptateurs LoRA (ou QLoRA, sur un modèle quantifié "
        "en 4 bits) plutôt que tous les poids, ou répartir les états du modèle sur plusieurs GPU "
        "(ZeRO, FSDP). Avec un modèle pré-défini, « Est-ce que ça tient ? » classe ces "
        "changements pour votre cas.",
        EN: "In order of effort: shrink the batch and checkpoint activations, switch to an 8-bit "
        "optimizer, train LoRA adapters (or QLoRA, on a model quantized to 4 bits) rather than "
        "all the weights, or shard the model states across several GPUs (ZeRO, FSDP). With a "
        "preset model, \"Will it fit?\" ranks these changes for your case.",
    },
    "web.faq_units_q": {
        FR: "Pourquoi des Go et des Gio ?", EN: "Why both GB and GiB?",
    },
    "web.faq_units_a": {
        FR: "Un Go vaut 10⁹ octets, l'unité de la règle M = N·B ; un Gio vaut 2³⁰ octets. Les "
        "fabricants vendent une carte « {accelerator} » qui contient {capacity_gib}, soit "
        "{capacity_gb} : la page compare toujours des octets avec des octets, et chaque ligne "
        "écrit ses valeurs dans une seule unité, l'autre entre parenthèses.",
        EN: "A GB is 10⁹ bytes, the unit of the rule M = N·B; a GiB is 2³⁰ bytes. Makers sell a "
        "\"{accelerator}\" card that holds {capacity_gib}, that is {capacity_gb}: the page always "
        "compares bytes with bytes, and each line writes its values in one unit, the other in "
        "parentheses.",
    },
    # --- Mentions légales: the seed's (web_seed.py), then the page's ------------------------------
    "web.legal": {FR: "Mentions légales", EN: "Legal notice"},
    "web.legal_more": {
        FR: "Les calculs sont faits sur ce serveur ; la page ne dépose aucun cookie et n'envoie "
        "aucune donnée ailleurs.",
        EN: "The computation runs on this server; the page sets no cookie and sends no data "
        "anywhere else.",
    },
    "web.lower_bound": {
        FR: "* Borne basse : le total réparti également entre les cartes, sans surcoût de "
        "partitionnement.",
        EN: "* Lower bound: the total split evenly across the cards, with no sharding overhead.",
    },
    # --- API documentation page and errors ----------------------------------------------------
    "web.api_docs_title": {FR: "API JSON de vramplan", EN: "vramplan JSON API"},
    "web.not_found_title": {FR: "Page introuvable", EN: "Page not found"},
    "web.back_home": {FR: "Retour au calculateur", EN: "Back to the calculator"},
    "error.not_found": {
        FR: "aucune ressource à l'adresse « {value} » ; {accepted}",
        EN: "nothing at '{value}'; {accepted}",
    },
    "error.method_not_allowed": {
        FR: "la méthode HTTP {value} n'est pas acceptée à cette adresse ; {accepted}",
        EN: "HTTP method {value} is not allowed at this address; {accepted}",
    },
    "error.unknown_field": {
        FR: "{field} : champ inconnu ; champs acceptés : {choices}",
        EN: "{field}: unknown field; accepted fields: {choices}",
    },
    "error.not_json": {
        FR: "{field} : le corps n'est pas un objet JSON valide ; {accepted}",
        EN: "{field}: the body is not a valid JSON object; {accepted}",
    },
    "accepted.body": {
        FR: "envoyez un objet JSON comme {{\"params\": 7, \"activations\": 20}}",
        EN: "send a JSON object such as {{\"params\": 7, \"activations\": 20}}",
    },
    "accepted.path": {
        FR: "voir /api/docs pour les adresses de l'API",
        EN: "see /api/docs for the API's addresses",
    },
    "accepted.http_method": {FR: "voir /api/docs", EN: "see /api/docs"},
    "accepted.port": {
        FR: "indiquez un port TCP entier de 1 à 65 535 (par exemple 8000)",
        EN: "give a whole TCP port from 1 to 65,535 (e.g. 8000)",
    },
    # --- `vramplan serve` ---------------------------------------------------------------------
    "help.serve": {
        FR: "sert le calculateur web et l'API JSON (par défaut http://127.0.0.1:8000)",
        EN: "serve the web calculator and the JSON API (default http://127.0.0.1:8000)",
    },
    "help.host": {
        FR: "adresse d'écoute (par défaut 127.0.0.1)", EN: "address to listen on (default "
        "127.0.0.1)"
    },
    "help.port": {FR: "port TCP (par défaut 8000)", EN: "TCP port (default 8000)"},
    "serve.listening": {
        FR: "Calculateur sur http://{host}:{port}/ (anglais : /en/, API : /api/docs) — Ctrl+C "
        "pour arrêter",
        EN: "Calculator at http://{host}:{port}/ (English: /en/, API: /api/docs) — Ctrl+C to stop",
    },
    "serve.public": {
        FR: "attention : {host} n'est pas l'adresse de bouclage ; le calculateur sera joignable "
        "depuis d'autres machines du réseau",
        EN: "warning: {host} is not a loopback address; the calculator will be reachable from "
        "other machines on the network",
    },
    "error.body_too_large": {
        FR: "{field} : la requête dépasse {limit} ; envoyez les champs du calculateur, ou un "
        "config.json, qui tiennent en quelques kilo-octets",
        EN: "{field}: the request is over {limit}; send the calculator's fields, or a "
        "config.json, which take a few kilobytes",
    },
    "error.internal": {
        FR: "erreur inattendue du serveur ; elle est consignée. Réessayez, ou signalez-la avec "
        "la requête",
        EN: "unexpected server error; it is logged. Try again, or report it with the request",
    },
}
