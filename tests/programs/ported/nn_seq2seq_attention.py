"""A seq2seq GRU encoder/decoder with additive (Bahdanau) attention and teacher forcing."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
SOS, EOS, VOCAB, HIDDEN, MAXLEN = 0, 1, 12, 16, 4


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=2)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        return self.gru(embedded)


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAXLEN):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        return self.out(output), hidden, attn_weights


encoder = EncoderRNN(VOCAB, HIDDEN)
decoder = AttnDecoderRNN(HIDDEN, VOCAB)
print(encoder)
print(decoder)
src = torch.randint(3, VOCAB, (4, MAXLEN))
tgt = torch.flip(src, dims=[1])
tgt[:, -1] = EOS
print(src.tolist()[0], tgt.tolist()[0])
enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()

for epoch in range(3):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    encoder_outputs, encoder_hidden = encoder(src)
    use_tf = random.random() < 0.5
    decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden, tgt if use_tf else None)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1))
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    print(f"epoch {epoch} teacher_forcing={use_tf} loss {loss.item():.4f} attn {tuple(attn.shape)}")

encoder.eval()
decoder.eval()
with torch.no_grad():
    enc_out, enc_h = encoder(src[:1])
    dec_out, dec_h, attn = decoder(enc_out, enc_h)
    _, topi = dec_out.topk(1)
    print("decoded:", topi.squeeze().tolist())
    print("attn row sums:", [f"{v:.4f}" for v in attn[0].sum(-1).tolist()])
    print(f"max attn {attn.max().item():.4f}", dec_h.shape)
print(encoder.embedding.weight[2].abs().sum().item(), encoder.embedding.weight.grad[2].abs().sum().item())
