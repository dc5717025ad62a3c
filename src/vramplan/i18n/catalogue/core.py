"""Messages of the seed calculator's core and CLI, in French and English."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- errors: one line naming the field, the value and what is accepted --------------------
    "error.invalid": {
        FR: "{field} : « {value} » n'est pas accepté ; {accepted}",
        EN: "{field}: '{value}' is not accepted; {accepted}",
    },
    "error.not_a_number": {
        FR: "{field} : « {value} » n'est pas un nombre ; {accepted}",
        EN: "{field}: '{value}' is not a number; {accepted}",
    },
    "error.not_finite": {
        FR: "{field} : « {value} » n'est pas un nombre fini ; {accepted}",
        EN: "{field}: '{value}' is not a finite number; {accepted}",
    },
    "error.out_of_range": {
        FR: "{field} : {value} est hors limites ; {accepted}",
        EN: "{field}: {value} is out of range; {accepted}",
    },
    "error.not_an_integer": {
        FR: "{field} : « {value} » n'est pas un nombre entier ; {accepted}",
        EN: "{field}: '{value}' is not a whole number; {accepted}",
    },
    "error.unknown_name": {
        FR: "{field} : « {value} » est inconnu ; valeurs acceptées : {choices}",
        EN: "{field}: unknown name '{value}'; accepted: {choices}",
    },
    "error.conflicting": {
        FR: "{field} et {other} ne peuvent pas être utilisés ensemble : donnez l'un ou l'autre",
        EN: "{field} and {other} cannot be used together: give one or the other",
    },
    "error.missing": {
        FR: "{field} : valeur manquante ; {accepted}",
        EN: "{field}: a value is required; {accepted}",
    },
    # --- parts of the memory per parameter ----------------------------------------------------
    "part.weights_16bit": {FR: "poids fp16/bf16", EN: "fp16/bf16 weights"},
    "part.gradients_16bit": {FR: "gradients fp16/bf16", EN: "fp16/bf16 gradients"},
    "part.master_fp32": {
        FR: "copie maîtresse fp32 des poids", EN: "fp32 master copy of the weights"
    },
    "part.adam_m_fp32": {FR: "premier moment d'Adam (fp32)", EN: "Adam first moment (fp32)"},
    "part.adam_v_fp32": {FR: "second moment d'Adam (fp32)", EN: "Adam second moment (fp32)"},
    "part.adam_m_8bit": {
        FR: "premier moment d'Adam (8 bits par blocs)", EN: "Adam first moment (8-bit, block-wise)"
    },
    "part.adam_v_8bit": {
        FR: "second moment d'Adam (8 bits par blocs)", EN: "Adam second moment (8-bit, block-wise)"
    },
    "part.sgd_momentum_fp32": {FR: "moment de SGD (fp32)", EN: "SGD momentum buffer (fp32)"},
    "part.planning_margin": {
        FR: "marge du chiffre rond (aucun tenseur réel)",
        EN: "margin of the round figure (no real tensor)",
    },
    # --- optimizer presets --------------------------------------------------------------------
    "optimizer.adam-mixed": {FR: "Adam en précision mixte", EN: "Adam, mixed precision"},
    "optimizer.adam-8bit": {FR: "Adam 8 bits", EN: "8-bit Adam"},
    "optimizer.sgd-momentum": {FR: "SGD avec moment", EN: "SGD with momentum"},
    "optimizer.custom": {FR: "valeur personnalisée", EN: "custom value"},
    "note.adam-8bit": {
        FR: "≈ 12 est un chiffre rond de planification : les parties réelles (2 + 2 + 4 + 1 + 1) "
        "font 10 octets/param, plus quelques millièmes d'octet de statistiques de blocs.",
        EN: "≈ 12 is a round planning figure: the real parts (2 + 2 + 4 + 1 + 1) make 10 "
        "bytes/param, plus a few thousandths of a byte of block statistics.",
    },
    "note.sgd-momentum": {
        FR: "≈ 8 suppose des poids et gradients 16 bits, un moment fp32 et aucune copie maîtresse "
        "fp32 ; avec copie maîtresse, c'est 12 octets/param.",
        EN: "≈ 8 assumes 16-bit weights and gradients, an fp32 momentum and no fp32 master copy; "
        "with a master copy it is 12 bytes/param.",
    },
    # --- CLI report ---------------------------------------------------------------------------
    "report.title": {
        FR: "VRAM pour l'entraînement — règle de base : M = N·B, V = M + A",
        EN: "Training VRAM — seed rule: M = N·B, V = M + A",
    },
    "report.params": {FR: "Paramètres N", EN: "Parameters N"},
    "report.billion": {FR: "{n} milliards", EN: "{n} billion"},
    "report.bytes_per_param": {FR: "Mémoire par paramètre B", EN: "Memory per parameter B"},
    "report.bytes_value": {FR: "{n} octets/param", EN: "{n} bytes/param"},
    "report.breakdown": {FR: "Détail de B", EN: "Breakdown of B"},
    "report.model_states": {FR: "États du modèle M = N·B", EN: "Model states M = N·B"},
    "report.activations": {FR: "Activations A", EN: "Activations A"},
    "report.total": {FR: "VRAM totale V = M + A", EN: "Total VRAM V = M + A"},
    "report.verdict": {
        FR: "Verdict par GPU (une carte « 80 GB » contient 80 Gio)",
        EN: "Verdict per GPU (an \"80 GB\" card holds 80 GiB)",
    },
    "report.col_gpu": {FR: "GPU", EN: "GPU"},
    "report.col_capacity": {FR: "capacité", EN: "capacity"},
    "report.col_fits": {FR: "tient ?", EN: "fits?"},
    "report.col_headroom": {FR: "marge", EN: "headroom"},
    "report.col_min_gpus": {FR: "GPU min.*", EN: "min. GPUs*"},
    "report.yes": {FR: "oui", EN: "yes"},
    "report.no": {FR: "non", EN: "no"},
    "report.lower_bound": {
        FR: "* borne basse : le total réparti également, sans surcoût de partitionnement.",
        EN: "* lower bound: the total split evenly, with no sharding overhead.",
    },
    "report.notice": {
        FR: "Estimation de premier ordre : hors tampons temporaires, allocations du framework et "
        "surcoût de communication. Vérifiez sur une vraie étape d'entraînement.",
        EN: "First-order estimate: no temporary buffers, framework allocations or communication "
        "overhead. Check it on a real training step.",
    },
    "gpus.col_name": {FR: "nom", EN: "name"},
    "gpus.col_model": {FR: "modèle", EN: "model"},
    "gpus.col_memory": {FR: "mémoire", EN: "memory"},
    "gpus.col_cuda_total": {FR: "total CUDA", EN: "CUDA total"},
    "gpus.col_source": {FR: "source", EN: "source"},
    # --- CLI help -----------------------------------------------------------------------------
    "help.description": {
        FR: "vramplan : combien de mémoire GPU (VRAM) faut-il pour entraîner un LLM, et tient-il "
        "sur vos GPU ?",
        EN: "vramplan: how much GPU memory (VRAM) it takes to train an LLM, and whether it fits "
        "on your GPUs.",
    },
    "help.lang": {
        FR: "langue des messages (par défaut : d'après LC_ALL/LANG)",
        EN: "language of the messages (default: from LC_ALL/LANG)",
    },
    "help.version": {FR: "affiche la version et quitte", EN: "show the version and exit"},
    "help.json": {FR: "sortie JSON (schéma stable)", EN: "JSON output (stable schema)"},
    "help.flag_off": {FR: "désactive l'option précédente (active par défaut)",
                      EN: "turns the option above off (on by default)"},
    "help.estimate": {
        FR: "estime la VRAM d'entraînement : M = N·B, V = M + A",
        EN: "estimate training VRAM: M = N·B, V = M + A",
    },
    "help.gpus": {FR: "liste le catalogue de GPU", EN: "list the GPU catalogue"},
    "help.examples": {
        FR: "exemples :\n"
        "  vramplan estimate --params 7                     # 112 Go d'états du modèle\n"
        "  vramplan estimate --params 7 --activations 20    # 132 Go au total\n"
        "  vramplan estimate --params 7,5 --optimizer adam-8bit --gpu h100-80gb\n"
        "  vramplan estimate --params 7 --bytes-per-param 10 --json\n"
        "  vramplan gpus",
        EN: "examples:\n"
        "  vramplan estimate --params 7                     # 112 GB of model states\n"
        "  vramplan estimate --params 7 --activations 20    # 132 GB in total\n"
        "  vramplan estimate --params 7.5 --optimizer adam-8bit --gpu h100-80gb\n"
        "  vramplan estimate --params 7 --bytes-per-param 10 --json\n"
        "  vramplan gpus",
    },
    "cli.error_prefix": {FR: "vramplan : erreur : ", EN: "vramplan: error: "},
    # argparse's own words, which it would print in English
    "cli.usage": {FR: "utilisation : ", EN: "usage: "},
    "cli.positionals": {FR: "arguments positionnels", EN: "positional arguments"},
    "cli.options": {FR: "options", EN: "options"},
    "help.help": {FR: "affiche cette aide et quitte", EN: "show this help message and exit"},
    "cli.unrecognized": {FR: "arguments non reconnus : {args} (voir --help)",
                         EN: "unrecognized arguments: {args} (see --help)"},
    "cli.expected_one": {FR: "{arg} attend une valeur", EN: "{arg} expects a value"},
    "cli.invalid_choice": {FR: "{arg} : choix invalide : {value} ; valeurs acceptées : {choices}",
                           EN: "{arg}: invalid choice: {value}; accepted: {choices}"},
    "cli.not_allowed_with": {FR: "{arg} et {other} ne peuvent pas être utilisés ensemble",
                             EN: "{arg} and {other} cannot be used together"},
    "cli.required": {FR: "ces arguments sont requis : {args}",
                     EN: "these arguments are required: {args}"},
    "error.missing_extra": {
        FR: "cette commande a besoin de l'extra [{value}] ({missing} manquant) : "
        "pip install '.[{value}]' dans le dossier de vramplan",
        EN: "this command needs the [{value}] extra ({missing} missing): "
        "pip install '.[{value}]' in vramplan's folder",
    },
}
